"""In a real ipykernel (nbclient): top-level await in %%nstrace, and cells labelled 'Cell In[N]'.

The in-process shell of the other tests names cells ``<ipython-input-N-...>`` and runs no event
loop; a kernel names them ``/tmp/ipykernel_PID/HASH.py`` and runs its asyncio loop in the thread
that executes the cell. Both differences matter here, so this runs a real kernel.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

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
