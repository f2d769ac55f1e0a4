"""Offline nstviz: record one run anywhere, ingest TORCH_TRACE logs, diff runs per rank."""
