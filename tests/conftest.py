"""Shared pytest setup: tests import ``tests.*`` helpers; torch compile caches are reset.

Skips: with ``NSTVIZ_STRICT_SKIPS=1`` (set by ``scripts/test.sh``) every skipped test that is
not declared in ``tests/expected_skips.txt`` fails the run; the unexpected ones are listed
before pytest's closing line.
"""

from __future__ import annotations

import fnmatch
import os
import re
import signal
from pathlib import Path

import pytest

from tests.helpers.gc_setting import collect_less_often

EXPECTED_SKIPS = Path(os.environ.get("NSTVIZ_EXPECTED_SKIPS") or Path(__file__).with_name("expected_skips.txt"))
_skips: list[tuple[str, str]] = []


def _expected_skips() -> list[tuple[str, re.Pattern[str]]]:
    """``(node id pattern, reason regex)`` per line ``PATTERN | REASON-REGEX`` of the allowlist."""
    out = []
    for raw in EXPECTED_SKIPS.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        pattern, _, reason = (part.strip() for part in line.partition("|"))
        out.append((pattern, re.compile(reason or ".*")))
    return out


def unexpected_skips(skips: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The skips (node id, reason) that no line of ``tests/expected_skips.txt`` declares."""
    allowed = _expected_skips()
    return [
        (node, reason) for node, reason in skips
        if not any(fnmatch.fnmatchcase(node, pat) and rx.search(reason) for pat, rx in allowed)
    ]


def _strict_skips() -> bool:
    return os.environ.get("NSTVIZ_STRICT_SKIPS") == "1"


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reason = reason.removeprefix("Skipped: ")
        _skips.append((report.nodeid, reason))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _strict_skips() and unexpected_skips(_skips) and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _strict_skips():
        return
    bad = unexpected_skips(_skips)
    if bad:
        terminalreporter.section("unexpected skips (not in tests/expected_skips.txt): the run fails")
        for node, reason in bad:
            terminalreporter.line(f"UNEXPECTED SKIP {node}: {reason}")


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C raises KeyboardInterrupt even in a background job; garbage is collected less often.

    A non-interactive shell starts background jobs with SIGINT ignored, and Python then keeps
    it ignored, so the interrupt tests would see nothing. Installing Python's own handler here
    also gives every child process (kernels, CLI runs) the default disposition back. The
    collector's setting: :mod:`tests.helpers.gc_setting`.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    collect_less_often()


_HEAVY_FIRST = (
    "tests/models/",
    "tests/rewrites/test_buffers.py",
    "tests/rewrites/test_routers.py",
    "tests/capture/test_remedies.py",
    "tests/rewrites/test_branches.py",
    "tests/fuzz/test_program_fuzz.py",
    "tests/notebooks/",
    "tests/browser/test_jupyterlab.py",
    "tests/viewer/test_viewer.py",
    "tests/analysis/test_advisor_rewrites.py",
    "tests/cli/test_cli_runs.py",
)
"""The files that take the longest (the real-model corpus, minutes per file; then the real-model
rewrites and remedies, the program fuzz, the notebooks and the longest browser files, which
otherwise came late in collection order; by ``--durations`` per file) run first, in this order,
so the workers of ``pytest -n`` (``--dist loadfile``) each start on a heavy file and share the
short ones at the end.
xdist reorders files by their number of tests unless told not to: ``scripts/test.sh`` passes
``--no-loadscope-reorder`` (with the reorder, the corpus files, 1-4 tests each, ran last)."""


def _heavy_rank(nodeid: str) -> int:
    return next((i for i, prefix in enumerate(_HEAVY_FIRST) if nodeid.startswith(prefix)), len(_HEAVY_FIRST))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: _heavy_rank(item.nodeid))  # stable: order kept otherwise


@pytest.fixture(scope="session")
def warm_backends() -> None:
    """torch's one-time work of the first eager/aot_eager compile, done before any snapshot."""
    from tests.helpers.warm import warm

    warm("eager", "aot_eager")


@pytest.fixture(scope="session")
def warm_inductor(warm_backends: None) -> None:
    """The same for inductor (its first compile also starts torch's compile worker pool)."""
    from tests.helpers.warm import warm

    warm("inductor")


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    """Each test starts and ends with no compiled frames cached (tests stay independent)."""
    import sys

    torch = sys.modules.get("torch")
    if torch is not None:
        torch._dynamo.reset()
    yield
    torch = sys.modules.get("torch")
    if torch is not None:
        torch._dynamo.reset()
