"""Shared test helpers (state snapshots, Report digests)."""
