"""Execute each demo notebook headless (nbclient, a real kernel) and check what it shows.

The Reports are read back from the saved widget state, which is also what makes a notebook
saved with widget state reopen showing the view.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from nstviz.report import Report

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
TIMINGS: dict[str, float] = {}


def execute(name: str, workdir: Path) -> nbformat.NotebookNode:
    shutil.copy(NOTEBOOKS / name, workdir / name)
    nb = nbformat.read(workdir / name, as_version=4)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    start = time.perf_counter()
    NotebookClient(
        nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(workdir)}}
    ).execute()
    TIMINGS[name] = time.perf_counter() - start
    nbformat.validate(nb)
    return nb


def stream_text(nb: nbformat.NotebookNode) -> str:
    return "".join(
        o.get("text", "")
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "stream"
    )


def reports(nb: nbformat.NotebookNode) -> list[Report]:
    """The Reports of the notebook's widgets, in cell order, from the saved widget state."""
    state = nb.metadata["widgets"][WIDGET_STATE]["state"]
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if o.output_type != "display_data" or WIDGET_VIEW not in o.data:
                continue
            assert "text/html" in o.data and "nstviz-static-summary" in o.data["text/html"]  # static fallback
            assert "text/plain" in o.data
            model = state[o.data[WIDGET_VIEW]["model_id"]]["state"]
            assert model["progress"]["phase"] == "done"
            assert "export default" in model["_esm"] or "render" in model["_esm"]
            out.append(Report.from_json(model["report_json"]))
    return out


def counts(report: Report) -> dict[str, dict[str, object]]:
    """The Report's per-run counts as plain dicts (compared with written-down values)."""
    return {name: dataclasses.asdict(c) for name, c in report.counts.items()}


def assert_clean(nb: nbformat.NotebookNode) -> None:
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            assert o.output_type != "error", f"{o.ename}: {o.evalue}"
            if o.output_type == "stream" and o.name == "stderr":
                assert "Traceback" not in o.text, o.text


def test_01_seed_example(tmp_path: Path) -> None:
    nb = execute("01-seed-example.ipynb", tmp_path)
    assert_clean(nb)
    (report,) = reports(nb)
    base, nst = report.runs["baseline"], report.runs["nonstrict"]
    assert [(b.gb_id, b.count, b.fatal) for b in base.breaks] == [("GB0025", 1, True)]
    assert counts(report) == {
        "baseline": dict(graphs=0, breaks=1, break_hits=1, ops=0, aten_ops=0, regions=0, inlined_nodes=0, full_graph=False,
                         graph_breaks=0),  # fullgraph: Dynamo counts no graph break
        "nonstrict": dict(graphs=1, breaks=0, break_hits=0, ops=3, aten_ops=2, regions=1, inlined_nodes=2, full_graph=True,
                          graph_breaks=0),
    }
    assert [g.level for g in nst.graphs] == ["dynamo", "aten_inference"]
    assert [(r.function, sum(map(len, r.nodes.values()))) for r in nst.regions] == [("get_magic_num", 2)]
    assert [b.gb_id for b in report.diff.resolved] == ["GB0025"]
    assert (report.outputs.match, [(d.path, d.match) for d in report.outputs.details]) == (True, [("out", True)])
    assert "baseline: 1 break(s), nonstrict: 0 break(s), one graph: True" in stream_text(nb)
    assert "tensor([43., 43., 43., 43.])" in stream_text(nb)
    # renderers without widget support (nbconvert/nbviewer, GitHub) show the static summary
    from nbconvert import HTMLExporter

    nb.metadata.pop("widgets")  # as JupyterLab saves by default (no widget state)
    body, _ = HTMLExporter().from_notebook_node(nb)
    assert "nstviz-static-summary" in body and "1 break → 0, fullgraph failed → 1 graph" in body


def test_02_module_helper(tmp_path: Path) -> None:
    nb = execute("02-module-helper.ipynb", tmp_path)
    assert_clean(nb)
    (report,) = reports(nb)
    assert counts(report) == {
        "baseline": dict(graphs=6, breaks=1, break_hits=4, ops=12, aten_ops=18, regions=0, inlined_nodes=0, full_graph=False,
                         graph_breaks=4),
        "nonstrict": dict(graphs=1, breaks=0, break_hits=0, ops=16, aten_ops=35, regions=3, inlined_nodes=18, full_graph=True,
                          graph_breaks=0),
    }
    assert [(b.gb_id, b.count) for b in report.runs["baseline"].breaks] == [("GB0025", 4)]
    regions = report.runs["nonstrict"].regions
    assert [(r.function, sum(map(len, r.nodes.values()))) for r in regions] == [("rms_scale", 6)] * 3
    assert report.outputs.match is True and len(report.outputs.details) == 10
    assert all(d.match for d in report.outputs.details)


@pytest.mark.slow
def test_03_transformers_model(tmp_path: Path) -> None:
    nb = execute("03-transformers-model.ipynb", tmp_path)
    assert_clean(nb)
    (report,) = reports(nb)
    assert counts(report) == {
        "baseline": dict(graphs=8, breaks=2, break_hits=11, ops=66, aten_ops=77, regions=0, inlined_nodes=0, full_graph=False,
                         graph_breaks=7),
        "nonstrict": dict(graphs=1, breaks=0, break_hits=0, ops=111, aten_ops=131, regions=2, inlined_nodes=2, full_graph=True,
                          graph_breaks=0),
    }
    # reached 10 times, 7 graph breaks by Dynamo's counter; GB4347 is logged, never counted
    assert [(b.gb_id, b.count, b.caused) for b in report.runs["baseline"].breaks] == [("GB0025", 10, 7), ("GB4347", 1, 0)]
    regions = report.runs["nonstrict"].regions
    assert [(r.function, sum(map(len, r.nodes.values()))) for r in regions] == [("fused_softmax", 1)] * 2  # one per layer
    assert report.outputs.match is True and len(report.outputs.details) == 30
    modules = {n.module for g in report.runs["nonstrict"].graphs for n in g.nodes if n.module}
    assert len(modules) == 26 and {"h.0.attn.c_attn", "h.1.mlp.c_proj"} <= modules  # a real model's paths


def test_04_training_step(tmp_path: Path) -> None:
    nb = execute("04-training-step.ipynb", tmp_path)
    assert_clean(nb)
    (report,) = reports(nb)
    nst = report.runs["nonstrict"]
    assert [g.level for g in nst.graphs] == ["dynamo", "aten_forward", "aten_backward"]
    assert counts(report) == {
        "baseline": dict(graphs=3, breaks=1, break_hits=2, ops=4, aten_ops=7, regions=0, inlined_nodes=0, full_graph=False,
                         graph_breaks=2),  # Net.forward's graph, then clip_activations' own
        "nonstrict": dict(graphs=1, breaks=0, break_hits=0, ops=5, aten_ops=7, regions=1, inlined_nodes=6, full_graph=True,
                          graph_breaks=0),
    }
    assert [(r.function, sum(map(len, r.nodes.values()))) for r in nst.regions] == [("clip_activations", 6)]
    assert report.outputs.match is True
    assert [(d.path, d.match) for d in report.outputs.details] == [
        ("x", True), ("target", True), ("loss", True), ("weight_after", True)
    ]


def test_05_auto_and_limits(tmp_path: Path) -> None:
    nb = execute("05-auto-and-limits.ipynb", tmp_path)
    assert_clean(nb)
    auto, data_dependent, stale = reports(nb)
    assert auto.recommendation is not None and auto.recommendation.functions == ("normalize",)
    assert [(c.function, c.status) for c in auto.candidates] == [("normalize", "improved"), ("layer", "skipped")]
    assert list(auto.runs) == ["baseline", "nonstrict", "attempt-1"]
    assert (auto.counts["baseline"].breaks, auto.counts["baseline"].break_hits, auto.counts["nonstrict"].breaks) == (1, 4, 0)
    assert [(r.function, sum(map(len, r.nodes.values()))) for r in auto.runs["nonstrict"].regions] == [
        ("normalize", 3), ("normalize", 3)
    ]
    # data-dependent: the break remains, and the nonstrict attempt fails with GB0251
    diff = data_dependent.diff
    assert ([b.gb_id for b in diff.resolved], [b.gb_id for b in diff.remaining], [b.gb_id for b in diff.introduced]) == (
        [], ["GB0170"], ["GB0251"]
    )
    assert [(b.gb_id, b.count) for b in data_dependent.runs["nonstrict"].breaks] == [("GB0251", 1), ("GB0170", 1)]
    # a value read from outside the inputs is baked in: outputs differ, and the check says where
    assert stale.counts["nonstrict"].breaks == 0 and stale.outputs.match is False
    assert [(d.path, d.match) for d in stale.outputs.details] == [("second", False), ("first", True)]
    assert [(r.function, sum(map(len, r.nodes.values()))) for r in stale.runs["nonstrict"].regions] == [("scaled", 1)]
    assert "outputs match: False" in stream_text(nb)


def test_notebooks_are_small_and_output_free() -> None:
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), path.name
        assert path.stat().st_size < 20_000, path.name
