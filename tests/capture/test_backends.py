"""Backends: record (default), inductor (post-grad graphs too), as_written, a user backend."""

from __future__ import annotations

import pytest
import torch

import nstviz
from tests.capture.cases import corpus as c
from tests.helpers import digest, state

pytestmark = pytest.mark.usefixtures("warm_backends")  # torch's first-compile work before any snapshot


@pytest.mark.slow
@pytest.mark.usefixtures("warm_inductor")
def test_inductor_records_aten_and_post_grad_graphs():
    before = state.take()
    report = nstviz.compare(c.loop_fn, torch.ones(3), nonstrict=["loop_helper"], backend="inductor")
    state.assert_same(before, state.take())
    digest.check_consistent(report)
    nst = report.runs["nonstrict"]
    assert [g.level for g in nst.graphs] == ["dynamo", "aten_inference", "inductor_post_grad"]
    assert nst.regions[0].nodes == {"0/0:aten_inference": ("mul",), "0/0:inductor_post_grad": ("mul",)}
    assert report.outputs.match is True


def test_as_written_keeps_the_objects_backend_and_records_dynamo():
    compiled = torch.compile(c.loop_fn, backend="aot_eager")
    report = nstviz.compare(compiled, torch.ones(3), nonstrict=["loop_helper"], backend="as_written")
    nst = report.runs["nonstrict"]
    assert [g.level for g in nst.graphs] == ["dynamo", "aten_inference"] and len(nst.regions) == 6
    assert report.backend == "as_written"
    eager = nstviz.compare(torch.compile(c.loop_fn, backend="eager"), torch.ones(3), nonstrict=["loop_helper"],
                           backend="as_written")
    assert [g.level for g in eager.runs["nonstrict"].graphs] == ["dynamo"]


def test_user_backend_callable_is_called():
    seen = []

    def my_backend(gm, example_inputs):
        seen.append(len(gm.graph.nodes))
        return gm.forward

    report = nstviz.compare(c.loop_fn, torch.ones(3), nonstrict=["loop_helper"], backend=my_backend)
    assert seen and digest.dynamo_graphs(report.runs["nonstrict"]) == 1
    assert report.backend == "test_user_backend_callable_is_called.<locals>.my_backend"


def test_fullgraph_setting_of_compiled_object_is_kept():
    report = nstviz.compare(torch.compile(c.loop_fn, fullgraph=True), torch.ones(3), nonstrict=["loop_helper"])
    base = report.runs["baseline"]
    assert [(b.gb_id, b.fatal) for b in base.breaks] == [("GB0007", True)]
    assert report.counts["nonstrict"].full_graph


@pytest.mark.slow
@pytest.mark.usefixtures("warm_inductor")
def test_as_written_with_default_inductor_object_records_aten_graphs():
    report = nstviz.trace_code(
        "y = torch.compile(loop_fn)(torch.ones(3))\n",
        {"torch": torch, "loop_fn": c.loop_fn},
        nonstrict=["loop_helper"],
        backend="as_written",
    )
    levels = [g.level for g in report.runs["nonstrict"].graphs]
    assert levels == ["dynamo", "aten_inference", "inductor_post_grad"]
