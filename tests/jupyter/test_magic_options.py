"""The magics' option handling and messages (no torch run needed: all fail before running)."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError as IPythonUsageError

from nstviz.jupyter.magics import split_line


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("f(x)", ("", "f(x)")),
        ("--nonstrict a,b f(x)", ("--nonstrict a,b ", "f(x)")),
        ("--auto --budget 5 model(x)", ("--auto --budget 5 ", "model(x)")),
        ("--backend=record y = f(x, '--a b')", ("--backend=record ", "y = f(x, '--a b')")),
        ('--html "my report.html" f(x)', ('--html "my report.html" ', "f(x)")),
        ("--quiet -- -x", ("--quiet ", "-x")),
        ("--nonstrict a", ("--nonstrict a", "")),
    ],
)
def test_split_line(line: str, expected: tuple[str, str]) -> None:
    assert split_line(line) == expected


def test_load_ext_registers_both_magics(ip) -> None:
    magics = ip.magics_manager.magics
    assert "nstrace" in magics["line"] and "nstrace" in magics["cell"]


def test_unload_and_reload(ip) -> None:
    ip.run_line_magic("unload_ext", "nstviz")
    assert "nstrace" not in ip.magics_manager.magics["cell"]
    ip.run_line_magic("load_ext", "nstviz")
    assert "nstrace" in ip.magics_manager.magics["cell"]


def test_help_is_written_for_users(ip) -> None:
    doc = ip.magics_manager.magics["line"]["nstrace"].__doc__
    for text in (
        "runs TWICE",
        "LAST run",
        "--nonstrict",
        "--auto",
        "--backend",
        "--html",
        "--json",
        "--name",
        "--no-check",
        "--budget",
        "--max-attempts",
        "--quiet",
        "--baseline",
    ):
        assert text in doc, text


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("--budget 3 f()", "only apply with --auto"),
        ("--max-attempts 2 f()", "only apply with --auto"),
        ("--auto --budget -1 f()", "positive number of seconds"),
        ("--auto --max-attempts 0 f()", "at least 1"),
        ("--auto --budget soon f()", "invalid float value"),
        ("--name 1x f()", "not a valid Python variable name"),
        ("--name class f()", "not a valid Python variable name"),
        ("--baseline sloppy f()", "invalid choice"),
        ("--frobnicate f()", "unrecognized arguments: --frobnicate"),
        ("--json /no/such/dir/r.json f()", "does not exist"),
        ("", "needs code to run"),
        ("--nonstrict a", "needs code to run"),
        ("--nonstrict f x = = 1", "syntax error"),
    ],
)
def test_line_magic_misuse_is_one_paragraph(ip, line: str, message: str) -> None:
    with pytest.raises(IPythonUsageError, match=message) as info:
        ip.run_line_magic("nstrace", line)
    assert "\n" not in str(info.value) or "syntax error" in message
    assert "Traceback" not in str(info.value)


def test_cell_magic_misuse(ip) -> None:
    with pytest.raises(IPythonUsageError, match="cell is empty"):
        ip.run_cell_magic("nstrace", "--nonstrict f", "   \n")
    with pytest.raises(IPythonUsageError, match="unrecognized arguments: f"):
        ip.run_cell_magic("nstrace", "--auto f", "x = 1\n")
    with pytest.raises(IPythonUsageError, match=r"syntax error[\s\S]*line 3"):
        ip.run_cell_magic("nstrace", "", "x = 1\ny = = 2\n")


def test_misuse_leaves_the_namespace_alone(ip) -> None:
    before = set(ip.user_ns)
    with pytest.raises(IPythonUsageError):
        ip.run_line_magic("nstrace", "--name 1x x = 1")
    assert set(ip.user_ns) == before
