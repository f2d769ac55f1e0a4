"""nstviz on the reproducers users posted (``corpus.py``): its baseline and verdicts against torch's truth.

Every case runs in this process with the ``eager`` backend and tiny tensors; the truth was
established with torch alone by ``truth.py`` and is recorded in ``corpus.py`` with the link.
"""

from __future__ import annotations

import pytest

import nstviz
from tests.users.corpus import CASES, Case


def _gb_ids(report: nstviz.Report, run: str) -> tuple[str, ...]:
    return tuple(sorted({b.gb_id for b in report.runs[run].breaks if b.gb_id}))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case: Case):
    expect = case.expect
    kwargs: dict = {"backend": "eager"}
    if "nonstrict" in expect:
        kwargs["nonstrict"] = list(expect["nonstrict"])
    if expect.get("auto"):
        kwargs["auto"] = True
    if "compared" in expect:
        kwargs["baseline"] = "strict"  # a second run to compare the outputs with
    report = nstviz.trace_code(case.source, {}, **kwargs)
    # the baseline: what torch alone counted (graphs, distinct breaks by GB id)
    assert report.counts["baseline"].graphs == case.graphs
    assert _gb_ids(report, "baseline") == case.gb_ids
    if "skipped" in expect:
        assert expect["skipped"] in report.headline.text
        assert expect["skipped"] in report.summary()
    if "compared" in expect:
        check = report.outputs
        paths = {d.path for c in check.comparisons for d in c.details}
        assert set(expect["compared"]) <= paths, check
        assert check.match is True, check
    if "nonstrict" in expect:
        assert report.counts["nonstrict"].graphs == expect["nonstrict_graphs"] == case.fix_graphs
        assert all(m.applied for m in report.runs["nonstrict"].marked), report.runs["nonstrict"].marked
        assert report.outputs.match is True
    if expect.get("auto"):
        rec = report.recommendation
        assert rec is not None, [(c.function, c.status, c.error) for c in report.candidates]
        assert rec.graphs_after == expect["recommended_graphs"] == case.fix_graphs
        assert rec.outputs_match is True
