"""Execute each demo notebook headless (nbclient, a real kernel) and check what it shows.

The Reports are read back from the saved widget state, which is also what makes a notebook
saved with widget state reopen showing the view.
"""

from __future__ import annotations

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
    assert len(base.breaks) == 1 and base.breaks[0].fatal and base.breaks[0].gb_id == "GB0025"
    assert report.counts["nonstrict"].breaks == 0 and report.counts["nonstrict"].full_graph
    assert [r.function for r in nst.regions] == ["get_magic_num"] and report.counts[
        "nonstrict"
    ].inlined_nodes > 0
    assert [b.gb_id for b in report.diff.resolved] == ["GB0025"]
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
    base, nst = report.counts["baseline"], report.counts["nonstrict"]
    assert base.breaks == 1 and base.break_hits >= 3 and base.graphs > 3
    assert nst.breaks == 0 and nst.graphs == 1 and nst.regions == 3
    regions = report.runs["nonstrict"].regions
    assert {r.function for r in regions} == {"rms_scale"} and all(
        sum(map(len, r.nodes.values())) > 0 for r in regions
    )
    assert report.outputs.match is True


@pytest.mark.slow
def test_03_transformers_model(tmp_path: Path) -> None:
    nb = execute("03-transformers-model.ipynb", tmp_path)
    assert_clean(nb)
    (report,) = reports(nb)
    base, nst = report.counts["baseline"], report.counts["nonstrict"]
    assert base.graphs > 2 and any(
        b.gb_id == "GB0025" and b.count >= 2 for b in report.runs["baseline"].breaks
    )
    assert nst.breaks == 0 and nst.graphs == 1 and nst.regions == 2  # one per layer
    assert report.outputs.match is True
    assert any(
        n.module for g in report.runs["nonstrict"].graphs for n in g.nodes
    )  # module paths of a real model


def test_04_training_step(tmp_path: Path) -> None:
    nb = execute("04-training-step.ipynb", tmp_path)
    assert_clean(nb)
    (report,) = reports(nb)
    nst = report.runs["nonstrict"]
    assert {g.level for g in nst.graphs} >= {"dynamo", "aten_forward", "aten_backward"}
    assert report.counts["baseline"].breaks == 1 and report.counts["nonstrict"].breaks == 0
    assert report.counts["nonstrict"].graphs == 1
    assert report.outputs.match is True
    assert {d.path for d in report.outputs.details} >= {"loss", "weight_after"}


def test_05_auto_and_limits(tmp_path: Path) -> None:
    nb = execute("05-auto-and-limits.ipynb", tmp_path)
    assert_clean(nb)
    auto, data_dependent, stale = reports(nb)
    assert auto.recommendation is not None and auto.recommendation.functions == ("normalize",)
    assert auto.counts["nonstrict"].breaks == 0 and any(c.status == "improved" for c in auto.candidates)
    # data-dependent: the break remains, and the nonstrict attempt fails with GB0251
    assert any(b.gb_id == "GB0170" for b in data_dependent.diff.remaining)
    assert any(b.gb_id == "GB0251" for b in data_dependent.diff.introduced)
    # a value read from outside the inputs is baked in: outputs differ, and the check says where
    assert stale.counts["nonstrict"].breaks == 0 and stale.outputs.match is False
    assert {d.path for d in stale.outputs.details if d.match is False} == {"second"}
    assert "outputs match: False" in stream_text(nb)


def test_notebooks_are_small_and_output_free() -> None:
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), path.name
        assert path.stat().st_size < 20_000, path.name
