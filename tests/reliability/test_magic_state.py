"""%%nstrace in an in-process IPython shell: restoration, the user namespace, and leaks."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest
import torch
from IPython.utils.capture import capture_output

import nstviz.api
import nstviz.passes.assemble
from nstviz.report import Report
from tests.helpers.snapshot import ProcessState, assert_restored
from tests.reliability import programs

MAGIC = "%%nstrace --nonstrict get_magic_num\n"
IPYTHON_NAMES = {"In", "Out", "exit", "quit", "get_ipython", "_", "__", "___", "_oh", "_ih", "_dh"}


@pytest.fixture(scope="module")
def shell(ip: Any) -> Any:
    ip.run_cell(programs.SEED_DEFS)
    return ip


def _shell_state(ip: Any) -> dict[str, Any]:
    """What the shell itself holds that nstviz could change."""
    return {
        "events": {name: tuple(cbs) for name, cbs in ip.events.callbacks.items()},
        "displayhook": ip.displayhook,
        "display_pub": ip.display_pub,
        "magics": sorted(ip.magics_manager.magics["cell"]),
        "input_transformers": tuple(ip.input_transformers_post),
        "ast_transformers": tuple(ip.ast_transformers),
        "custom_exceptions": ip.custom_exceptions,
    }


def _user_names(ns: dict[str, Any]) -> set[str]:
    return {k for k in ns if not k.startswith("_") and k not in IPYTHON_NAMES}


def _run(ip: Any, cell: str) -> Any:
    with capture_output() as captured:
        result = ip.run_cell(cell)
    result.captured = captured
    return result


# -- restoration through the magic ----------------------------------------------------------------


def _fault(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_a: Any, **_k: Any) -> Any:
        raise RuntimeError("injected fault in nstviz.passes.assemble.diff_breaks")

    monkeypatch.setattr(nstviz.passes.assemble, "diff_breaks", boom)


CASES = {
    "success": (MAGIC + programs.SEED_CELL, None, None),
    "user error": (MAGIC + programs.SEED_CELL + "raise ValueError('boom')\n", None, (Exception,)),
    "error before compiling": (MAGIC + "1 / 0\n" + programs.SEED_CELL, None, (ZeroDivisionError,)),
    "Ctrl-C in user code": (
        MAGIC + "import signal\nsignal.raise_signal(signal.SIGINT)\n" + programs.SEED_CELL,
        None,
        (KeyboardInterrupt,),
    ),
    "fault inside nstviz": (MAGIC + programs.SEED_CELL, _fault, (RuntimeError,)),
    "advisor budget": (
        "%%nstrace --auto --budget 0.000001\n" + programs.BREAKING_CELL,
        None,
        None,
    ),
    "bad option": ("%%nstrace --no-such-option\n" + programs.SEED_CELL, None, None),
    "unknown name": ("%%nstrace --nonstrict nope\n" + programs.SEED_CELL, None, None),
}


@pytest.mark.parametrize("case", list(CASES))
def test_magic_restores_everything(case: str, shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    cell, setup, raises = CASES[case]
    if setup is not None:
        setup(monkeypatch)
    before, before_shell = ProcessState.take(), _shell_state(shell)
    result = _run(shell, cell)
    monkeypatch.undo()
    if raises is not None:
        assert isinstance(result.error_in_exec, raises), result.error_in_exec
    assert_restored(before)
    assert _shell_state(shell) == before_shell


# -- the user namespace ---------------------------------------------------------------------------

NAMESPACE_PRE = """
import torch
log = []
n = 0
weights = torch.ones(3)
"""

NAMESPACE_CELL = """
def ns_helper(x):
    torch._dynamo.graph_break()
    return x * 2

@torch.compile
def ns_f(x):
    return ns_helper(x) + 1

log.append(len(log))
n = n + 1
weights.mul_(2)
ns_out = ns_f(weights)
ns_tmp = [ns_out.sum().item()]
"""


def test_namespace_ends_as_a_normal_run_leaves_it(shell: Any) -> None:
    shell.run_cell(NAMESPACE_PRE)
    normal: dict[str, Any] = {"torch": torch, "log": [], "n": 0, "weights": torch.ones(3)}
    exec(compile(NAMESPACE_CELL, "<normal>", "exec"), normal)

    before = _user_names(shell.user_ns)
    result = _run(shell, "%%nstrace --nonstrict ns_helper\n" + NAMESPACE_CELL)
    assert result.success, result.error_in_exec
    ns = shell.user_ns
    added = _user_names(ns) - before
    assert added == {"ns_helper", "ns_f", "ns_out", "ns_tmp"}, "nstviz must bind nothing of its own"
    assert ns["log"] == normal["log"] == [0], "the cell's side effect happened once, as in a normal run"
    assert ns["n"] == normal["n"] == 1
    assert torch.equal(ns["weights"], normal["weights"]) and torch.equal(ns["ns_out"], normal["ns_out"])
    assert ns["ns_tmp"] == normal["ns_tmp"]
    assert not any("nstviz" in k.lower() for k in ns), sorted(k for k in ns if "nstviz" in k.lower())


def test_name_option_binds_only_that_name(shell: Any) -> None:
    before = _user_names(shell.user_ns)
    result = _run(shell, "%%nstrace --nonstrict get_magic_num --name rep\n" + programs.SEED_CELL)
    assert result.success, result.error_in_exec  # the last (nonstrict) run does not raise
    assert _user_names(shell.user_ns) - before <= {"rep", "out", "func"}
    assert isinstance(shell.user_ns.pop("rep"), Report)


# -- leaks -----------------------------------------------------------------------------------------


@pytest.fixture
def report_refs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[weakref.ref[Report]]]:
    """Weak references to every Report the magic builds: the capture's and the one it hands out
    (the magic relabels notebook cells as 'Cell In[N]', which makes a new Report)."""
    from nstviz.jupyter import cell_labels

    refs: list[weakref.ref[Report]] = []
    captured: list[weakref.ref[Report]] = []
    real, real_relabel = nstviz.api.trace_code, cell_labels.with_cell_labels

    def recording(*args: Any, **kwargs: Any) -> Report:
        report = real(*args, **kwargs)
        captured.append(weakref.ref(report))
        return report

    def relabelling(*args: Any, **kwargs: Any) -> Report:
        report = real_relabel(*args, **kwargs)
        refs.append(weakref.ref(report))
        return report

    monkeypatch.setattr(nstviz.api, "trace_code", recording)
    monkeypatch.setattr(cell_labels, "with_cell_labels", relabelling)
    yield refs
    assert len(captured) == len(refs)
    assert [r for r in captured[:-1] if r() is not None and all(r() is not x() for x in refs)] == []


LEAK_RUNS = 15


def test_fifteen_runs_leave_nothing_behind(shell: Any, report_refs: list[weakref.ref[Report]]) -> None:
    """No handlers, hooks, threads or Reports accumulate over consecutive %%nstrace runs."""
    import ipywidgets.widgets.widget as widget_module

    widgets = getattr(widget_module, "_instances", None) or widget_module.Widget.widgets
    shell.run_cell("import torch")
    _run(shell, "%%nstrace --nonstrict helper\n" + programs.BREAKING_CELL)  # warm-up
    before, before_shell = ProcessState.take(), _shell_state(shell)
    widgets_before = len(widgets)
    for i in range(LEAK_RUNS):
        name = " --name kept" if i == LEAK_RUNS - 1 else ""
        result = _run(shell, f"%%nstrace --nonstrict helper{name}\n" + programs.BREAKING_CELL)
        assert result.success, result.error_in_exec
    assert_restored(before)  # every logger's handlers, threads, hooks, configs, modules removed...
    assert _shell_state(shell) == before_shell
    del result
    _collect()
    alive = [i for i, r in enumerate(report_refs[1:]) if r() is not None]
    assert alive == [LEAK_RUNS - 1], f"Reports {alive} still alive, want only the one bound by --name"
    assert report_refs[-1]() is shell.user_ns["kept"]
    # Each displayed Viewer (and its Layout) lives as long as the kernel, as every ipywidget does;
    # it holds the Report's JSON text only (see docs/reliability.md).
    assert len(widgets) - widgets_before == 2 * LEAK_RUNS
    del shell.user_ns["kept"]
    _collect()
    alive = [i for i, r in enumerate(report_refs) if r() is not None]
    assert not alive, f"Reports {alive} still alive; referrers: {_referrers(report_refs[alive[0]])}"


def _collect() -> None:
    # Several passes: torch's weakref callbacks, run during one collection, free more cycles.
    for _ in range(3):
        gc.collect()


def _referrers(ref: weakref.ref[Report]) -> str:
    obj = ref()
    return "; ".join(f"{type(r).__name__}: {str(r)[:300]}" for r in gc.get_referrers(obj) if not isinstance(r, list))
