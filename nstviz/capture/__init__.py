"""Capture engine: hooks into torch (trace log, recording backend, marking, state) and the runner."""
