"""Offline diff per rank of the recorded TORCH_TRACE fixtures, and the cross-rank finding."""

from __future__ import annotations

from pathlib import Path

import pytest

from nstviz.errors import UsageError
from nstviz.offline.diff import break_identity, diff_paths, load_side, offline_check_failures
from nstviz.offline.ingest import ingest_dir
from nstviz.report import Report


def _where(breaks):
    return [(b.gb_id, Path(b.location.file).name, b.location.line, b.location.function) for b in breaks]


def test_before_vs_after_per_rank(tracelogs: Path) -> None:
    report = diff_paths(tracelogs / "before", tracelogs / "after")
    report.validate()
    assert report.rank == 0 and [v.rank for v in report.ranks] == [1]
    for diff, counts in ((report.diff, report.counts), (report.ranks[0].diff, report.ranks[0].counts)):
        assert _where(diff.resolved) == [("GB0025", "train_ddp.py", 28, "rms_scale")]
        assert _where(diff.remaining) == [("GB0156", "train_ddp.py", 62, "<module>"), ("GB0007", "train_ddp.py", 62, "<module>")]
        assert diff.introduced == ()
        assert (counts["baseline"].graphs, counts["baseline"].breaks, counts["baseline"].break_hits) == (3, 3, 5)
        assert (counts["nonstrict"].graphs, counts["nonstrict"].breaks, counts["nonstrict"].break_hits) == (1, 2, 3)
        assert (counts["nonstrict"].regions, counts["nonstrict"].inlined_nodes) == (1, 19)
    assert report.findings == ()
    assert report.summary().splitlines()[0] == "3 breaks → 2, 3 graphs → 1, outputs not checked (offline runs keep no outputs)"
    assert [v.headline.text for v in report.ranks] == ["3 breaks → 2, 3 graphs → 1, outputs not checked (offline runs keep no outputs)"]
    assert offline_check_failures(report) == []
    assert offline_check_failures(report, fail_on_break=True) == [
        "rank 0: 2 distinct break(s) remain (--fail-on-break)",
        "rank 1: 2 distinct break(s) remain (--fail-on-break)",
    ]
    # the JSON round trip keeps ranks and findings
    again = Report.from_json(report.to_json())
    assert again.ranks == report.ranks and again.rank == 0


def test_a_rank_that_compiled_differently_is_named(tracelogs: Path) -> None:
    report = diff_paths(tracelogs / "before", tracelogs / "after_diverge")
    (finding,) = report.findings
    assert finding.kind == "ranks_differ" and finding.run == "nonstrict" and finding.ranks == (1,)
    assert finding.message == (
        "after: rank 1 compiled differently from rank 0 (a rank-dependent graph break or recompile; "
        "in a distributed job this can also hang collectives)"
    )
    assert finding.details == (
        "rank 1 compiled 2 graph(s), rank 0 1",
        "break only on rank 1: train_ddp.py:52 in forward (GB0025)",
    )
    assert report.diff.introduced == ()
    assert _where(report.ranks[0].diff.introduced) == [("GB0025", "train_ddp.py", 52, "forward")]
    assert offline_check_failures(report) == [
        "rank 1: 1 break(s) introduced: train_ddp.py:52 in forward (GB0025)",
        finding.message,
    ]


def test_ingested_folders_and_trace_folders_give_the_same_diff(tmp_path: Path, tracelogs: Path) -> None:
    ingest_dir(tracelogs / "before", tmp_path / "before")
    ingest_dir(tracelogs / "after_diverge", tmp_path / "after")
    from_files = diff_paths(tmp_path / "before", tmp_path / "after")
    from_logs = diff_paths(tracelogs / "before", tracelogs / "after_diverge")
    assert from_files.diff == from_logs.diff and from_files.ranks == from_logs.ranks
    assert from_files.findings == from_logs.findings
    # one rank file against another works too (rank 0 only)
    single = diff_paths(tmp_path / "before" / "rank-0.nstviz.json", tmp_path / "after" / "rank-0.nstviz.json")
    assert single.ranks == () and single.rank == 0


def test_break_identity_is_location_and_gb_id(tracelogs: Path) -> None:
    run = load_side(tracelogs / "after_diverge")[1].runs["baseline"]
    ids = [break_identity(b).rsplit(":", 3) for b in run.breaks]
    assert [b.id for b in run.breaks] == [break_identity(b) for b in run.breaks]
    assert [(Path(i[0]).name, i[1], i[2], i[3]) for i in ids] == [
        ("train_ddp.py", "62", "<module>", "GB0156"),
        ("train_ddp.py", "62", "<module>", "GB0007"),
        ("train_ddp.py", "52", "forward", "GB0025"),
    ]


def test_sides_without_a_common_rank_or_with_a_full_report(tmp_path: Path, tracelogs: Path) -> None:
    ingest_dir(tracelogs / "before", tmp_path / "b")
    (tmp_path / "b" / "rank-1.nstviz.json").unlink()
    ingest_dir(tracelogs / "after", tmp_path / "a")
    (tmp_path / "a" / "rank-0.nstviz.json").unlink()
    with pytest.raises(UsageError, match=r"BEFORE has ranks \[0\] and AFTER ranks \[1\]: no rank in common"):
        diff_paths(tmp_path / "b", tmp_path / "a")
    full = diff_paths(tracelogs / "before", tracelogs / "after")
    full.save_json(tmp_path / "full.json")
    with pytest.raises(UsageError, match="holds 2 runs"):
        load_side(tmp_path / "full.json")


def test_a_rank_that_recompiled_differently_is_named(tracelogs: Path) -> None:
    import dataclasses

    from nstviz.offline.diff import diff_sides
    from nstviz.offline.ingest import ingest_log

    full = ingest_log(tracelogs / "recompile" / "dedicated_log_torch_trace.log.gz")
    run = full.runs["baseline"]
    once = dataclasses.replace(run, compiles=run.compiles[:1], graphs=run.graphs[:2])  # that rank never recompiled
    partial = dataclasses.replace(full, runs={"baseline": once})
    report = diff_sides({0: full, 1: full, 2: full}, {0: full, 1: partial, 2: full})
    (finding,) = report.findings
    assert (finding.run, finding.ranks) == ("nonstrict", (1,))
    assert finding.message.startswith("after: rank 1 compiled differently from ranks 0, 2 ")
    assert finding.details == ("rank 1 compiled 1 graph(s), rank 0 2", "rank 1 recompiled 0 time(s), rank 0 1")
    missing = diff_sides({0: full, 1: full}, {0: full})
    assert [(f.kind, f.message, f.ranks) for f in missing.findings] == [
        ("rank_missing", "after has no run of rank 1: those ranks are not compared", (1,))
    ]
