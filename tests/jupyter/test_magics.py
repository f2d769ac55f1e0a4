"""%%nstrace / %nstrace end to end in an in-process IPython shell, with real torch.compile runs."""

from __future__ import annotations

import os
import signal
import sys
import threading

import pytest
import torch
from IPython.utils.capture import capture_output

from nstviz.jupyter import last_viewer
from nstviz.report import Report
from tests.helpers.snapshot import _inert_lazy_trace_handler

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

SEED_DEFS = """
import torch
def get_magic_num():
    torch._dynamo.graph_break()
    return torch.tensor([42.0])
"""

SEED_CELL = """
@torch.compile(fullgraph=True)
def func(x):
    return x + get_magic_num()

out = func(torch.ones(4))
"""


@pytest.fixture(scope="module")
def seeded(ip):
    ip.run_cell(SEED_DEFS)
    return ip


def _state():
    from nstviz.capture import _torch_compat

    logger = _torch_compat.trace_logger()
    return (
        _torch_compat.id_set_contents(),
        tuple(h for h in logger.handlers if not _inert_lazy_trace_handler(h)),
        logger.level,
        sys.stdout,
        sys.stderr,
        torch.get_rng_state().clone(),
        _torch_compat.dynamo_config_copy(),
    )


def _same_state(a, b) -> bool:
    return a[:5] == b[:5] and torch.equal(a[5], b[5]) and a[6] == b[6]


def _widget_outputs(captured) -> list[dict]:
    return [o.data for o in captured.outputs if WIDGET_MIME in o.data]


def _on_screen(captured) -> list[dict]:
    """The outputs a front end shows at the end: display updates replace their display id's output."""
    shown: dict[object, dict] = {}
    for i, o in enumerate(captured.outputs):
        key = (o.transient or {}).get("display_id") or i
        shown[key] = o.data
    return list(shown.values())


def test_seed_cell_fixes_the_break_and_shows_the_widget(seeded) -> None:
    for name in ("func", "out", "report"):  # an earlier test in this shell may have bound them
        seeded.user_ns.pop(name, None)
    before_names = set(seeded.user_ns)
    before = _state()
    with capture_output() as captured:
        result = seeded.run_cell("%%nstrace --nonstrict get_magic_num --name report\n" + SEED_CELL.lstrip())
    assert result.success, result.error_in_exec
    assert _same_state(before, _state())
    report = seeded.user_ns["report"]
    assert isinstance(report, Report)
    assert report.counts["baseline"].breaks == 1 and report.runs["baseline"].breaks[0].fatal
    assert report.counts["nonstrict"].breaks == 0 and report.counts["nonstrict"].full_graph
    # the baseline raised: the nonstrict run is checked against an eager run of the cell
    assert report.outputs.match is True
    assert [(c.left, c.right) for c in report.outputs.comparisons] == [("eager", "nonstrict")]
    assert torch.equal(seeded.user_ns["out"], torch.full((4,), 43.0))
    # the widget was displayed, and its final bundle carries the static summary
    bundles = _widget_outputs(captured)
    assert bundles, captured.outputs
    assert f"&mdash; {report.headline.text}</p>" in bundles[-1]["text/html"]  # the Report's headline, as is
    assert report.headline.text.startswith("1 break → 0, fullgraph failed → 1 graph")
    w = last_viewer()
    assert w is not None and w.report == report and w.progress["phase"] == "done"
    # nothing of nstviz's is left in the namespace; the cell's own names and --name are
    new = {n for n in set(seeded.user_ns) - before_names if not n.startswith("_")}
    assert new == {"func", "out", "report"}
    # the break's stack uses the cell's own line numbers (line 1 is the %%nstrace line)
    cell_lines = {loc.line for loc in report.runs["baseline"].breaks[0].stack if loc.function == "func"}
    assert cell_lines == {4}, report.runs["baseline"].breaks[0].stack


def test_printed_output_goes_to_the_widget_not_the_cell(seeded) -> None:
    cell = "%%nstrace --nonstrict get_magic_num --name rep2\nprint('hello from the cell')\ny = torch.compile(lambda x: x + get_magic_num())(torch.ones(2))\n"
    with capture_output() as captured:
        result = seeded.run_cell(cell)
    assert result.success
    assert "hello from the cell" not in captured.stdout
    rep = seeded.user_ns["rep2"]
    assert "hello from the cell" in rep.runs["baseline"].stdout
    assert "hello from the cell" in rep.runs["nonstrict"].stdout
    from nstviz.jupyter.widget import viewer_shows_printed_output

    if not viewer_shows_printed_output():  # then the magic shows it, once, under the view
        blocks = [
            o.data["text/html"] for o in captured.outputs if "nstviz-printed" in o.data.get("text/html", "")
        ]
        assert len(blocks) == 1 and blocks[0].count("hello from the cell") == 2  # one per run


def test_user_exception_is_raised_after_the_widget(seeded) -> None:
    cell = (
        "%%nstrace --nonstrict get_magic_num\n"
        "g = torch.compile(lambda x: x + get_magic_num())\n"
        "z = g(torch.ones(2))\n"
        "raise ValueError('boom in the cell')\n"
    )
    with capture_output() as captured:
        result = seeded.run_cell(cell)
    assert isinstance(result.error_in_exec, ValueError)
    assert _widget_outputs(captured), "the widget is displayed before the traceback"
    shown = captured.stdout + captured.stderr
    assert "boom in the cell" in shown and "----> 4 raise ValueError" in shown
    assert "magics.py" not in shown and "nstviz" not in shown  # nstviz's frames are hidden


def test_line_magic_and_files(seeded, tmp_path) -> None:
    seeded.run_cell("h = torch.compile(lambda x: x * get_magic_num())")
    js, page = tmp_path / "r.json", tmp_path / "r.html"
    with capture_output():
        result = seeded.run_cell(
            f"%nstrace --nonstrict get_magic_num --json {js} --html {page} --quiet v = h(torch.ones(3))"
        )
    assert result.success, result.error_in_exec
    assert Report.from_json(js.read_text()).counts["nonstrict"].breaks == 0
    assert "nstviz-report" in page.read_text()
    assert torch.equal(seeded.user_ns["v"], torch.full((3,), 42.0))


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        (
            "%%nstrace --nonstrict no_such_fn\ny = torch.compile(lambda x: x + 1)(torch.ones(2))\n",
            "no_such_fn",
        ),
        ("%%nstrace\nx = 1 + 1\n", "compiled nothing"),
    ],
)
def test_misuse_is_a_usage_error_and_the_widget_is_withdrawn(seeded, cell: str, message: str) -> None:
    before = _state()
    with capture_output() as captured:
        result = seeded.run_cell(cell)
    assert type(result.error_in_exec).__name__ == "UsageError"
    assert message in str(result.error_in_exec)
    assert "Traceback" not in captured.stderr
    for data in _on_screen(captured):  # any widget shown while it ran was replaced by nothing
        if WIDGET_MIME in data:
            pytest.fail("a widget stayed on screen after a usage error")
    assert _same_state(before, _state())


def test_kernel_interrupt_leaves_everything_restored_and_says_interrupted(seeded) -> None:
    entered = threading.Event()
    seeded.user_ns["entered"] = entered
    # one eager unit: no Dynamo compile between the signal and the sleep. Short sleeps in a loop:
    # a SIGINT that lands between entered.set() and a long time.sleep() is only acted on when
    # that C call returns (CPython runs signal handlers between bytecodes), which made this test
    # sleep out a whole 120 s sleep in some full-suite runs
    seeded.run_cell(
        "import time\n@torch._dynamo.disable\ndef wait_here():\n    entered.set()\n"
        "    for _ in range(400):\n        time.sleep(0.05)\n\n"
        "def slow_helper(x):\n    wait_here()\n    return x\n"
    )
    cell = "%%nstrace --nonstrict get_magic_num\nslow = torch.compile(lambda x: slow_helper(x) + get_magic_num())\nr = slow(torch.ones(2))\n"
    before = _state()

    main = threading.main_thread().ident
    assert main is not None

    def interrupt_when_inside() -> None:  # a real SIGINT once the baseline run is in slow_helper
        if entered.wait(300):
            # to the main thread itself: a process-directed kill() may be taken by another thread,
            # which does not wake the main thread's sleep
            signal.pthread_kill(main, signal.SIGINT)

    interrupter = threading.Thread(target=interrupt_when_inside, name="interrupter")
    interrupter.start()
    with capture_output():
        result = seeded.run_cell(cell)
    interrupter.join()
    assert entered.is_set()  # it landed in the capture's baseline run (in the user's sleep)
    assert isinstance(result.error_in_exec, KeyboardInterrupt)
    assert last_viewer().progress["phase"] == "interrupted"
    assert _same_state(before, _state())
    assert "r" not in seeded.user_ns


def test_extension_list_loads_the_magics(tmp_path) -> None:
    """`nstviz` in IPython's `extensions` list registers the magics at start-up."""
    import subprocess

    (tmp_path / "profile_default").mkdir()
    (tmp_path / "profile_default" / "ipython_config.py").write_text(
        "c.InteractiveShellApp.extensions = ['nstviz']\n"
    )
    code = "print(sorted(k for k in get_ipython().magics_manager.magics['cell'] if k == 'nstrace'))"
    env = {**os.environ, "IPYTHONDIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-m", "IPython", "--no-banner", "-c", code],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert "['nstrace']" in out.stdout, out.stdout + out.stderr


def test_options_reach_the_capture(seeded) -> None:
    """--baseline strict lifts the code's own marks in the baseline; --no-check skips the check."""
    cell = (
        "%%nstrace --baseline strict --no-check --name strict_rep\n"
        "marked = torch._dynamo.nonstrict_trace(get_magic_num)\n"
        "s = torch.compile(lambda x: x + marked())(torch.ones(2))\n"
    )
    with capture_output():
        result = seeded.run_cell(cell)
    assert result.success, result.error_in_exec
    rep = seeded.user_ns["strict_rep"]
    assert rep.baseline_mode == "strict"
    assert rep.counts["baseline"].breaks == 1 and rep.counts["nonstrict"].breaks == 0
    assert rep.outputs.match is None and rep.outputs.skipped_reason
    assert rep.title.startswith("In [") and "--baseline strict" in rep.title
