"""In a real ipykernel (nbclient): top-level await in %%nstrace, and cells labelled 'Cell In[N]'.

The in-process shell of the other tests names cells ``<ipython-input-N-...>`` and runs no event
loop; a kernel names them ``/tmp/ipykernel_PID/HASH.py`` and runs its asyncio loop in the thread
that executes the cell. Both differences matter here, so this runs a real kernel. The labels are
checked against the ``In [N]`` the front end shows for each cell (its ``execution_count``); under
IPython 9 the shell's ``execution_count`` is already the next cell's number while a cell runs.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import ipykernel
import IPython
import nbformat
import pytest
from nbclient import NotebookClient

from nstviz.cli.main import main
from nstviz.report import Report

REPO = Path(__file__).resolve().parents[2]

CELLS = [
    "%load_ext nstviz",
    "import asyncio\nimport torch\n\ndef helper(x):\n    torch._dynamo.graph_break()\n    return x * 2\n\n"
    "async def fetch_scale():\n    await asyncio.sleep(0.001)\n    return 3.0\n",
    "%%nstrace --nonstrict helper --quiet --json report.json\n"
    "scale = await fetch_scale()\n"
    "out = torch.compile(lambda x: helper(x) + scale)(torch.ones(2))\n",
    "print(out.tolist(), scale)",
    # the case measured in issue 16: a cell defines a helper, the next %%nstrace cell compiles a function
    "factor = 2.0\n\ndef scale(x):\n    torch._dynamo.graph_break()\n    return x * factor\n",
    "%%nstrace --nonstrict scale --quiet --json step.json --html step.html\n"
    "@torch.compile\n"
    "def step(x):\n"
    "    y = x.cos()\n"
    "    return scale(y) + 1\n"
    "\n"
    "step(torch.ones(2))\n",
    "import IPython, ipykernel\nprint(IPython.__version__, ipykernel.__version__)",
    # --time: the cell's compiled calls are timed (re-run alone), its print is not repeated
    "%%nstrace --nonstrict scale --time --quiet --json timed.json\n"
    "print('cell ran')\n"
    "step(torch.ones(2))\n",
]


@pytest.mark.slow
def test_await_and_cell_labels_in_a_real_kernel(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    env_path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env_path) if p)  # this checkout's nstviz
    try:
        NotebookClient(nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        os.environ["PYTHONPATH"] = env_path
    errors = [o for c in nb.cells for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    assert nb.cells[3].outputs[0]["text"] == "[5.0, 5.0] 3.0\n"
    report = Report.from_json((tmp_path / "report.json").read_text(encoding="utf-8"))
    brk = report.runs["baseline"].breaks[0]
    assert (brk.gb_id, brk.location.file, brk.location.line, brk.location.function) == (
        "GB0025", "Cell In[2]", 5, "helper"
    )
    assert [(f.file, f.line) for f in brk.stack[-2:]] == [("Cell In[3]", 3), ("Cell In[2]", 5)]
    assert report.sources["Cell In[3]"].text.startswith("# %%nstrace --nonstrict helper")
    text = report.to_json()
    found = re.search(r"ipykernel_\d+/", text)
    assert found is None, text[found.start() - 300 : found.end() + 300]  # no kernel temp file name is left
    assert report.runs["nonstrict"].breaks == ()

    # the kernel runs this venv's IPython and ipykernel (CI runs this on IPython 8 and 9)
    assert nb.cells[6].outputs[0]["text"] == f"{IPython.__version__} {ipykernel.__version__}\n"

    # each frame's label is its own cell's In [N], in the Report, its summary, the HTML and the CLI
    defs, cell = nb.cells[4].execution_count, nb.cells[5].execution_count
    assert (defs, cell) == (5, 6)
    step = Report.from_json((tmp_path / "step.json").read_text(encoding="utf-8"))
    brk = step.runs["baseline"].breaks[0]
    assert (brk.location.file, brk.location.line, brk.location.function) == (f"Cell In[{defs}]", 4, "scale")
    assert [(f.file, f.line, f.function) for f in brk.stack[-2:]] == [
        (f"Cell In[{cell}]", 5, "step"),
        (f"Cell In[{defs}]", 4, "scale"),
    ]
    assert step.sources[f"Cell In[{cell}]"].text.startswith("# %%nstrace --nonstrict scale")
    assert step.sources[f"Cell In[{defs}]"].text.startswith("factor = 2.0")
    assert step.title.startswith(f"In [{cell}]: %%nstrace")
    assert f"at Cell In[{defs}], line 4 (scale)" in step.summary(), step.summary()
    assert f"Cell In[{defs}]" in (tmp_path / "step.html").read_text(encoding="utf-8")
    out = io.StringIO()
    assert main(["view", str(tmp_path / "step.json"), "-o", str(tmp_path / "v.html")], stdout=out, stderr=io.StringIO()) == 0
    assert f"Cell In[{defs}], line 4" in out.getvalue(), out.getvalue()
    assert f"Cell In[{cell + 1}]" not in step.to_json() + step.summary() + out.getvalue()  # the next cell's label

    timed = Report.from_json((tmp_path / "timed.json").read_text(encoding="utf-8"))
    for name in ("baseline", "nonstrict"):
        timing = timed.runs[name].timing
        assert timing is not None and timing.steady is not None and timing.steady.median_s > 0
        assert timing.graphs == timed.counts[name].graphs
        assert timed.runs[name].stdout == "cell ran\n"  # printed once per run, not per timed call
    assert step.runs["baseline"].timing is None  # without --time, a cell is not timed
