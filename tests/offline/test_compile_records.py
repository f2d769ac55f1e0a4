"""Offline ingest fills the same per-compile records as a live capture, where the log has them."""

from __future__ import annotations

from nstviz.offline.ingest import ingest_log


def test_offline_log_fills_the_same_records(tracelogs):
    run = ingest_log(tracelogs / "recompile" / "dedicated_log_torch_trace.log.gz").runs["baseline"]
    first, second = run.compiles
    assert first.guard_failures == () and first.cache_size == 0
    assert [(g.compile_id, g.guard) for g in second.guard_failures] == [
        ("0/0", "tensor 'x' size mismatch at index 0. expected 3, actual 4")
    ]
    assert second.cache_size == 1 and second.guard_count and second.backend_compile_time_s is not None
