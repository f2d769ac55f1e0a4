"""Frames of notebook cells are shown as IPython shows them: ``Cell In[3], line 4``."""

from __future__ import annotations

import io

import pytest
from IPython.utils.capture import capture_output

from nstviz.cli.main import main
from nstviz.jupyter.static_summary import html_summary
from nstviz.report import Report

DEFS = """\
import torch

def helper(x):
    torch._dynamo.graph_break()
    return x * 2
"""

CELL = """\
%%nstrace --name lab_report --json {json}
def fn(x):
    y = x.sin()
    return helper(y) + 1

lab_out = torch.compile(fn)(torch.ones(3))
"""


@pytest.fixture(scope="module")
def labelled(ip, tmp_path_factory: pytest.TempPathFactory) -> tuple[Report, int, int, str]:
    js = tmp_path_factory.mktemp("labels") / "r.json"
    defs_number = ip.execution_count
    assert ip.run_cell(DEFS, store_history=True).success
    cell_number = ip.execution_count
    with capture_output():
        result = ip.run_cell(CELL.format(json=js), store_history=True)
    assert result.success, result.error_in_exec
    return ip.user_ns["lab_report"], defs_number, cell_number, str(js)


def test_locations_sources_and_stacks_carry_the_cell_label(labelled) -> None:
    report, d, c, _ = labelled
    brk = report.runs["baseline"].breaks[0]
    assert (brk.location.file, brk.location.line, brk.location.function) == (f"Cell In[{d}]", 4, "helper")
    assert [(f.file, f.line, f.function) for f in brk.stack[-2:]] == [
        (f"Cell In[{c}]", 4, "fn"),
        (f"Cell In[{d}]", 4, "helper"),
    ]
    cells = sorted(k for k in report.sources if k.startswith("Cell"))
    assert cells == sorted([f"Cell In[{d}]", f"Cell In[{c}]"])
    assert not [k for k in report.sources if "ipython-input" in k]
    assert report.sources[f"Cell In[{d}]"].path == f"Cell In[{d}]"
    assert report.sources[f"Cell In[{d}]"].text == DEFS
    files = {loc.file for stack in report.stacks for loc in stack}
    assert {f"Cell In[{d}]", f"Cell In[{c}]"} <= files
    assert not [f for f in files if "ipython-input" in f]
    report.validate()
    assert Report.from_json(report.to_json()) == report


def test_summaries_say_cell_in_n_line_m(labelled) -> None:
    report, d, _, js = labelled
    assert f"break GB0025 at Cell In[{d}], line 4 (helper)" in report.summary(), report.summary()
    assert f"<code>Cell In[{d}], line 4</code> in <code>helper</code>" in html_summary(report)
    out = io.StringIO()
    assert main(["view", js, "-o", js + ".html"], stdout=out, stderr=io.StringIO()) == 0
    assert f"Cell In[{d}], line 4" in out.getvalue(), out.getvalue()
    assert "ipython-input" not in out.getvalue() + report.summary() + html_summary(report)
