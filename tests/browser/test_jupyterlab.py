"""Notebook 1 in a real JupyterLab (and Notebook 7), driven through Debian's Chromium.

Run All goes through the real menu; the widget must render (``data-nstviz-ready="1"``),
show the Report's numbers and highlighted nodes, and clicks in the page must reach the
kernel's ``Viewer`` (read back with a kernel client on the kernel's connection file), and
``Viewer.select`` in the kernel must reach the page. Screenshots land in ``test-artifacts/``.
"""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIDGET = '[data-nstviz-ready="1"]'
HOOK = f"document.querySelector('{WIDGET}').__nstviz"
KERNEL_JS = "window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
# Notebook 7 does not expose window.jupyterapp here: fall back to the toolbar's kernel indicator.
IDLE_JS = f"""() => {{
  if (!window.jupyterapp) return !!document.querySelector('.jp-Notebook-ExecutionIndicator[data-status="idle"]');
  try {{ return {KERNEL_JS}.status === 'idle'; }} catch (e) {{ return false; }}
}}"""
OPEN_JS = f"""([name]) => {{
  if (!window.jupyterapp) return document.title.includes(name.replace('.ipynb', ''))
    && !!document.querySelector('.jp-Notebook-ExecutionIndicator[data-status="idle"]');
  try {{
    const w = window.jupyterapp.shell.currentWidget;
    return w.context.path.endsWith(name) && {KERNEL_JS}.status === 'idle';
  }} catch (e) {{ return false; }}
}}"""


class Kernel:
    """A second client on the notebook's kernel, to read and drive the widget from Python."""

    def __init__(self, connection_file: Path) -> None:
        from jupyter_client import BlockingKernelClient

        self.client = BlockingKernelClient(connection_file=str(connection_file))
        self.client.load_connection_file()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=30)

    def run(self, code: str) -> str:
        out: list[str] = []

        def hook(msg: dict[str, Any]) -> None:
            if msg["msg_type"] == "stream":
                out.append(msg["content"]["text"])
            elif msg["msg_type"] == "error":
                out.append("\n".join(msg["content"]["traceback"]))

        reply = self.client.execute_interactive(code, output_hook=hook, timeout=60, store_history=False)
        assert reply["content"]["status"] == "ok", "".join(out)
        return "".join(out)

    def json(self, expr: str) -> Any:
        return json.loads(self.run(f"import json as _j; print(_j.dumps({expr}))").strip().splitlines()[-1])

    def close(self) -> None:
        self.client.stop_channels()


SEED_HEADLINE = ["1 break → 0", "fullgraph failed → 1 graph", "outputs match eager"]
"""The seed notebook's headline, written down (not derived from the code under test)."""


def open_notebook(browser, server, path: str, name: str):
    page = browser.new_page(viewport={"width": 1500, "height": 1100})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"{exc}\n{exc.stack}"))
    if path == "lab/tree":  # a fresh workspace: no tabs restored from earlier tests
        path = f"lab/workspaces/t{secrets.token_hex(4)}/tree"
    page.goto(f"{server.url}/{path}/{name}?token={server.token}")
    page.wait_for_function(OPEN_JS, arg=[name], timeout=90_000)
    deadline = time.monotonic() + 90
    while not _kernel_idle(server, name):  # the server's view too: the kernel has started
        assert time.monotonic() < deadline, f"no idle kernel for {name}"
        time.sleep(0.3)
    page.wait_for_function(IDLE_JS, timeout=30_000)
    return page, errors


def _kernel_idle(server, name: str) -> bool:
    sessions = server.api("/api/sessions")
    return any(s["path"].endswith(name) and s["kernel"]["execution_state"] == "idle" for s in sessions)


def run_all(page) -> None:
    page.click('.lm-MenuBar-itemLabel:text-is("Run")')
    page.click('li.lm-Menu-item[data-command="runmenu:run-all"]')


def wait_done(page, timeout_s: float = 180) -> None:
    """Wait for the widget, then for the kernel to finish every cell."""
    page.wait_for_selector(WIDGET, timeout=timeout_s * 1000)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        busy = page.locator(".jp-InputArea-prompt:text-is('[*]:')").count()
        if busy == 0 and page.evaluate(IDLE_JS):
            return
        time.sleep(0.3)
    raise AssertionError("the notebook did not finish running")


def test_notebook_1_in_jupyterlab(jupyterlab, browser, artifacts: Path) -> None:
    page, errors = open_notebook(browser, jupyterlab, "lab/tree", "01-seed-example.ipynb")
    kernel_id = page.evaluate(f"() => {KERNEL_JS}.id")
    run_all(page)
    wait_done(page)
    widget = page.locator(WIDGET)
    widget.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "jupyterlab-01-ran.png"))
    kernel = Kernel(jupyterlab.kernel_connection_file(kernel_id))
    try:
        expected = kernel.json(
            "{'counts': {k: [c.graphs, c.breaks] for k, c in report.counts.items()},"
            " 'inlined': sorted({(g, n) for r in report.runs['nonstrict'].regions for g, ns in r.nodes.items() for n in ns})}"
        )
        # the seed example, written down: the baseline's fullgraph=True failure compiled nothing
        # (0 graphs, 1 fatal break); the nonstrict run is one graph without breaks; the output
        # check compares the nonstrict run with an eager run of the cell
        assert expected["counts"] == {"baseline": [0, 1], "nonstrict": [1, 0]}
        headline = page.locator(f"{WIDGET} [data-testid=headline] > span").all_text_contents()
        assert headline == SEED_HEADLINE, headline

        # highlighted nodes: exactly the Report's inlined nodes of the graph shown
        widget.locator("button[title='expand all groups']").click()
        page.wait_for_function(f"() => {HOOK}.ready()")
        pane = page.evaluate(f"() => {HOOK}.panes()[0]")
        assert pane["run"] == "nonstrict"
        highlighted = sorted(n["name"] for n in pane["nodes"] if n["highlighted"])
        assert highlighted == sorted(n for g, n in expected["inlined"] if g == pane["graph"])
        assert len(highlighted) == 2  # the seed's get_magic_num region: 2 inlined ATen nodes

        # click a node: the selection reaches the kernel's Viewer
        target = highlighted[0]
        point = page.evaluate(f"([n]) => {HOOK}.screenPoint(0, n)", [target])
        page.mouse.click(point["x"], point["y"])
        page.wait_for_function(f"([n]) => {HOOK}.state().selectedNode.node === n", arg=[target])
        page.screenshot(path=str(artifacts / "jupyterlab-01-node-selected.png"))
        selected = _poll(
            lambda: kernel.json("__import__('nstviz.jupyter').jupyter.last_viewer().selected_node"), target
        )
        assert selected == {"run": "nonstrict", "graph": pane["graph"], "node": target}

        # click a break: likewise
        widget.locator("button.nsv-tab[data-tab=breaks]").click()
        widget.locator(".nsv-break[data-run=baseline][data-index='0'] .nsv-break-head").click()
        brk = _poll(
            lambda: kernel.json("__import__('nstviz.jupyter').jupyter.last_viewer().selected_break"),
            "baseline",
        )
        assert brk == {"run": "baseline", "index": 0}
        page.screenshot(path=str(artifacts / "jupyterlab-01-break-selected.png"))

        # and the other way: select from Python, see it in the page
        placeholder = next(n["name"] for n in pane["nodes"] if n["kind"] == "input")
        kernel.run(
            f"__import__('nstviz.jupyter').jupyter.last_viewer().select(node={placeholder!r}, run='nonstrict')"
        )
        page.wait_for_function(
            f"([n]) => {HOOK}.state().selectedNode.node === n", arg=[placeholder], timeout=15_000
        )

        # the export button writes the standalone HTML next to the notebook
        widget.locator("button:text-is('Export HTML')").click()
        exported = _poll(
            lambda: kernel.json("__import__('nstviz.jupyter').jupyter.last_viewer().last_export"), ".html"
        )
        assert (jupyterlab.root / exported).is_file() or Path(exported).is_file()

        # re-running the cell releases the previous run's widget (JupyterLab sends the cellId)
        count = "sum(type(w).__name__ == 'Viewer' for w in __import__('ipywidgets.widgets.widget', fromlist=['_'])._instances.values())"
        last_id = "__import__('nstviz.jupyter').jupyter.last_viewer().model_id"
        first_id = kernel.json(last_id)
        assert kernel.json(count) == 1
        page.locator(".jp-Cell:has(.nsv-root) .jp-InputArea-editor").click()
        page.keyboard.press("Shift+Enter")
        deadline = time.monotonic() + 90
        while kernel.json(last_id) == first_id:
            assert time.monotonic() < deadline, "the cell was not re-run"
            time.sleep(0.5)
        wait_done(page)
        assert kernel.json(count) == 1
        page.screenshot(path=str(artifacts / "jupyterlab-01-rerun.png"))

        # File > Save (with widget state), stop the kernel, reopen in a fresh workspace: the view
        # is back from the saved state alone (the notebook is trusted: JupyterLab signed it)
        page.keyboard.press("Control+s")
        page.wait_for_function(
            "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000
        )
    finally:
        kernel.close()
    page.close()
    jupyterlab.shutdown_sessions()  # no kernel keeps the widget models: only the saved state can
    saved = nbformat.read(jupyterlab.root / "01-seed-example.ipynb", as_version=4)
    assert saved.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    reopened, errors2 = open_notebook(browser, jupyterlab, "lab/tree", "01-seed-example.ipynb")
    reopened.wait_for_selector(WIDGET, timeout=60_000)
    assert reopened.locator(f"{WIDGET} [data-testid=headline] > span").all_text_contents() == SEED_HEADLINE
    reopened.locator(WIDGET).scroll_into_view_if_needed()
    reopened.screenshot(path=str(artifacts / "jupyterlab-01-reopened.png"))
    assert errors == [] and errors2 == []
    reopened.close()


def test_progress_reaches_the_page_while_the_cell_runs(jupyterlab, browser, artifacts: Path) -> None:
    """Trait updates pushed from the kernel's main thread show up before the cell ends."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(
        cells=[
            new_code_cell(
                "import os, time\nfrom nstviz.jupyter import Viewer\nw = Viewer()\ndisplay(w)\nw.start_progress(2)\n"
                "for i in range(8):\n    w.set_progress('baseline' if i < 4 else 'nonstrict', f'step {i}', runs_done=i // 4)\n"
                "    while not os.path.exists(f'progress-ack-{i}'):  # the test saw step i on the page\n"
                "        time.sleep(0.05)\n"
            )
        ]
    )
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, jupyterlab.root / "progress.ipynb")
    page, errors = open_notebook(browser, jupyterlab, "lab/tree", "progress.ipynb")
    run_all(page)
    seen: list[str] = []
    for i in range(8):  # the cell waits for our acknowledgement of each step: every one must show
        page.wait_for_function(
            "([i]) => [...document.querySelectorAll('.nsv-progress')].some(e => e.innerText.includes(`step ${i}`))",
            arg=[i], timeout=120_000,
        )
        seen.append(" ".join(page.locator(".nsv-progress").all_inner_texts()))
        (jupyterlab.root / f"progress-ack-{i}").touch()
    page.screenshot(path=str(artifacts / "jupyterlab-progress.png"))
    assert [("baseline" if i < 4 else "nonstrict") in s for i, s in enumerate(seen)] == [True] * 8, seen
    assert errors == []
    page.close()


def test_notebook_7_smoke(notebook7, browser, artifacts: Path) -> None:
    page, errors = open_notebook(browser, notebook7, "notebooks", "01-seed-example.ipynb")
    run_all(page)
    wait_done(page)
    assert page.locator(f"{WIDGET} [data-testid=headline] > span").all_text_contents() == SEED_HEADLINE
    page.locator(WIDGET).scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "notebook7-01.png"))
    # Notebook 7 itself logs a settings-schema error with the temp settings dir; only ours count
    assert [e for e in errors if "/static/notebook/" not in e] == []
    page.close()


def _poll(read, expect_in: str, timeout_s: float = 15) -> Any:
    """Read a value from the kernel until it mentions ``expect_in`` (trait sync is asynchronous)."""
    deadline = time.monotonic() + timeout_s
    value = read()
    while expect_in not in json.dumps(value) and time.monotonic() < deadline:
        time.sleep(0.2)
        value = read()
    return value


def test_kernel_interrupt_in_jupyterlab(jupyterlab, browser, artifacts: Path) -> None:
    """Kernel > Interrupt during a run: the widget says so, and torch/nstviz state is restored."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(
        cells=[
            new_code_cell(
                "%load_ext nstviz\nimport sys, time, torch\nfrom nstviz.capture import _torch_compat\n"
                "before = (_torch_compat.id_set_contents(), sys.stdout, sys.stderr)"
            ),
            # one eager unit (no Dynamo work between the marker file and the sleep), so the interrupt
            # sent once the file exists lands in the sleep, not in a compile that torch may swallow it in
            new_code_cell(
                "@torch._dynamo.disable\ndef wait_here():\n    open('entered-slow-helper', 'w').close()\n"
                "    time.sleep(120)\n\ndef slow_helper(x):\n    wait_here()\n    return x"
            ),
            new_code_cell(
                "%%nstrace --nonstrict slow_helper\nf = torch.compile(lambda x: slow_helper(x) + 1)\ny = f(torch.ones(2))"
            ),
        ]
    )
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, jupyterlab.root / "interrupt.ipynb")
    page, errors = open_notebook(browser, jupyterlab, "lab/tree", "interrupt.ipynb")
    kernel_id = page.evaluate(f"() => {KERNEL_JS}.id")
    run_all(page)
    page.wait_for_function(
        "() => /Running: baseline/.test(window.jupyterapp.shell.currentWidget.node.querySelector('.nsv-progress')?.textContent || '')",
        timeout=60_000,
    )
    entered = jupyterlab.root / "entered-slow-helper"  # the baseline run is inside the user's code
    deadline = time.monotonic() + 120
    while not entered.exists():
        assert time.monotonic() < deadline, "the capture never reached slow_helper"
        time.sleep(0.1)
    page.click('.lm-MenuBar-itemLabel:text-is("Kernel")')
    item = 'li.lm-Menu-item[data-command="kernelmenu:interrupt"]:not(.lm-mod-disabled)'
    page.wait_for_selector(item, state="visible", timeout=30_000)
    page.click(item)
    page.wait_for_function(
        "() => /interrupted/i.test(window.jupyterapp.shell.currentWidget.node.querySelector('.nsv-progress')?.textContent || '')",
        timeout=30_000,
    )
    page.wait_for_function(
        "() => { const t = window.jupyterapp.shell.currentWidget.node.textContent;"
        " return !t.includes('[*]:') && /KeyboardInterrupt/.test(t); }",
        timeout=30_000,
    )
    page.screenshot(path=str(artifacts / "jupyterlab-interrupted.png"))
    kernel = Kernel(jupyterlab.kernel_connection_file(kernel_id))
    try:
        restored = kernel.json(
            "[(_torch_compat.id_set_contents(), sys.stdout, sys.stderr) == before, 'y' in globals()]"
        )
    finally:
        kernel.close()
    assert restored == [True, False]
    assert errors == []
    page.close()
