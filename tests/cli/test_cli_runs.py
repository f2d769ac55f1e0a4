"""The nstviz command on real scripts: real torch.compile runs, real files, real exit codes."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nstviz.capture._torch_compat import nonstrict_trace_spelling
from nstviz.cli.main import main
from nstviz.cli.script import (
    EXIT_CHECK_FAILED,
    EXIT_NOTHING_COMPILED,
    EXIT_OK,
    EXIT_SCRIPT_RAISED,
    EXIT_USAGE,
)
from nstviz.render.html import extract_report_json
from nstviz.report import Report

REPO = Path(__file__).resolve().parents[2]

HELPER_SCRIPT = """
import sys
import torch

SEEN_ARGV = list(sys.argv)


def helper(x):
    torch._dynamo.graph_break()
    return x.sin() * 2


def other(x):
    torch._dynamo.graph_break()
    return x + 1


@torch.compile(backend="eager")
def f(x):
    return other(helper(x) + 1)


print("argv", sys.argv[1:])
y = f(torch.ones(4))
"""


def run_main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def write(tmp_path: Path, text: str, name: str = "script.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_run_writes_report_and_passes_argv(tmp_path):
    script = write(tmp_path, HELPER_SCRIPT)
    argv_before = sys.argv[:]
    code, out, err = run_main(
        "run",
        script,
        "a1",
        "--nonstrict",
        "helper",
        "-o",
        tmp_path / "r.html",
        "--json",
        tmp_path / "r.json",
        "--",
        "--lr",
        "0.1",
    )
    assert code == EXIT_OK, err
    assert sys.argv == argv_before
    report = Report.load_json(tmp_path / "r.json")
    assert "argv ['a1', '--lr', '0.1']" in report.runs["baseline"].stdout
    assert report.entry == "cli" and report.title == "script.py"
    assert len(report.runs["baseline"].breaks) == 2
    assert len(report.runs["nonstrict"].breaks) == 1  # `other` still breaks
    assert len(report.diff.resolved) == 1 and len(report.diff.remaining) == 1
    lines = out.splitlines()
    assert lines[-1] == str((tmp_path / "r.html").resolve())
    table = out.split("\n\n")[0]
    assert table.splitlines()[0] == report.headline.text  # the Report's headline, first
    assert table.splitlines()[1].split() == ["baseline", "nonstrict"]
    assert "distinct breaks" in table and "breaks: 1 resolved, 1 remaining, 0 introduced" in out
    assert "the script printed 1 line(s) per run: kept in the report (--show-output prints them)" in out
    assert "argv [" not in out
    assert (tmp_path / "r.html").stat().st_size > 10_000


def test_run_time_prints_one_timing_line_per_run(tmp_path):
    script = write(tmp_path, HELPER_SCRIPT)
    code, out, err = run_main("run", script, "-n", "helper", "--time", "-o", tmp_path / "r.html", "--json", tmp_path / "r.json")
    assert code == EXIT_OK, err
    report = Report.load_json(tmp_path / "r.json")
    for name in ("baseline", "nonstrict"):
        timing = report.runs[name].timing
        assert timing is not None and timing.graphs == report.counts[name].graphs
        assert f"{timing.text}" in out
    assert [line.split()[:2] for line in out.splitlines() if line.startswith("timing ")] == [
        ["timing", "baseline"], ["timing", "nonstrict"]
    ]
    assert report.runs["baseline"].stdout.count("argv") == 1  # the script itself ran once per run
    code, out, _ = run_main("run", script, "-n", "helper", "-o", tmp_path / "s.html")
    assert code == EXIT_OK and "timing " not in out  # scripts are timed only when asked


def test_check_fails_on_remaining_breaks_only_when_asked(tmp_path):
    script = write(tmp_path, HELPER_SCRIPT)
    code, out, _ = run_main("check", script, "-n", "helper", "-q")
    assert code == EXIT_OK, out
    assert out.rstrip().endswith("check passed")
    code, out, _ = run_main("check", script, "-n", "helper", "--fail-on-break", "-q")
    assert code == EXIT_CHECK_FAILED
    assert "1 distinct break(s) remain in the nonstrict run (--fail-on-break)" in out
    code, out, _ = run_main("check", script, "-n", "helper,other", "--fail-on-break", "-q")
    assert code == EXIT_OK, out


def test_check_fails_when_outputs_differ(tmp_path):
    # nonstrict_trace bakes the global SCALE in as a constant: the second call is stale.
    script = write(
        tmp_path,
        """
        import torch

        SCALE = torch.tensor(2.0)


        def scaled(x):
            torch._dynamo.graph_break()
            return x * SCALE


        @torch.compile(backend="eager")
        def f(x):
            return scaled(x) + 1


        a = f(torch.ones(3))
        SCALE = torch.tensor(3.0)
        b = f(torch.ones(3))
        """,
    )
    code, out, err = run_main("check", script, "-n", "scaled", "-q")
    assert code == EXIT_CHECK_FAILED, out + err
    assert "outputs differ" in out


def test_script_error_after_compiling_is_exit_3_with_report(tmp_path):
    script = write(tmp_path, HELPER_SCRIPT + "\nraise ValueError('boom')\n")
    code, _, err = run_main("run", script, "-n", "helper", "--json", tmp_path / "r.json", "-q")
    assert code == EXIT_SCRIPT_RAISED
    assert "ValueError: boom" in err
    assert Report.load_json(tmp_path / "r.json").runs["baseline"].error == "ValueError: boom"


def test_script_error_before_compiling_shows_the_users_traceback(tmp_path):
    script = write(tmp_path, "import torch\n\ndef helper(x):\n    return x\n\nraise KeyError('early')\n")
    code, _, err = run_main("run", script, "-n", "helper", "-q")
    assert code == EXIT_SCRIPT_RAISED
    assert f'File "{script.resolve()}", line 6' in err
    assert "nstviz/api.py" not in err  # only the user's frames
    assert "nstviz: error: the script raised before compiling anything: KeyError" in err


def test_clean_sys_exit_is_success(tmp_path):
    script = write(tmp_path, HELPER_SCRIPT + "\nsys.exit(0)\n")
    code, _, err = run_main("run", script, "-n", "helper", "--json", tmp_path / "r.json", "-q")
    assert code == EXIT_OK, err


def test_nothing_compiled_is_exit_4(tmp_path):
    script = write(tmp_path, "import torch\n\ndef helper(x):\n    return x\n\nhelper(torch.ones(2))\n")
    code, _, err = run_main("run", script, "-n", "helper", "-q")
    assert code == EXIT_NOTHING_COMPILED
    assert err.startswith("nstviz: error: ") and "Traceback" not in err


def test_unknown_nonstrict_name_is_a_usage_error(tmp_path):
    script = write(tmp_path, HELPER_SCRIPT)
    code, _, err = run_main("run", script, "-n", "no_such_helper", "-q")
    assert code == EXIT_USAGE
    assert "no_such_helper" in err and "Traceback" not in err


def test_progress_goes_to_stderr_and_quiet_silences_it(tmp_path):
    script = write(tmp_path, HELPER_SCRIPT)
    code, out, err = run_main("run", script, "-n", "helper", "--json", tmp_path / "r.json")
    assert code == EXIT_OK
    assert "nstviz: baseline run" in err and "nstviz: nonstrict run" in err
    assert "nstviz: baseline" not in out
    code, _, err = run_main("run", script, "-n", "helper", "--json", tmp_path / "r.json", "--quiet")
    assert code == EXIT_OK and err == ""


@pytest.mark.slow
def test_demo_console_script_from_a_clean_folder(tmp_path):
    """`nstviz demo` as the README runs it: nothing to prepare, ends with the report's path."""
    exe = Path(sys.executable).with_name("nstviz")
    cmd = [str(exe), "demo"] if exe.exists() else [sys.executable, "-m", "nstviz", "demo"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [*cmd, "--json", "demo.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert proc.returncode == EXIT_OK, proc.stderr[-3000:]
    last = proc.stdout.strip().splitlines()[-1]
    assert last == str(tmp_path / "nstviz-demo.html")
    report = Report.load_json(tmp_path / "demo.json")
    assert report.entry == "demo"
    counts = {name: report.runs[name] for name in ("baseline", "nonstrict")}
    assert counts["baseline"].breaks and not counts["nonstrict"].breaks
    where = {(b.location.function, b.fatal) for b in counts["baseline"].breaks}
    assert where == {("rms_scale", False), ("get_magic_num", True)}  # the example's frames are user code
    assert all(b.location.file.endswith("demo.py") for b in counts["baseline"].breaks)
    assert {m.spec for m in counts["nonstrict"].marked} == {"rms_scale", "get_magic_num"}
    assert all(m.applied for m in counts["nonstrict"].marked)
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    page = (tmp_path / "nstviz-demo.html").read_text(encoding="utf-8")
    assert json.loads(extract_report_json(page))["entry"] == "demo"


LIMITS_SCRIPT = """
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        torch._dynamo.graph_break()
        return self.lin(x)


def takes_none(x, mask):
    torch._dynamo.graph_break()
    return x if mask is None else x * mask


def data_dep(x):
    torch._dynamo.graph_break()
    return x * x.sum().item()


@torch.compile(backend="eager")
def f(x, b):
    return takes_none(b(x), None) + data_dep(x)


y = f(torch.ones(2, 4), Block())
"""


def test_check_names_what_nonstrict_trace_cannot_do(tmp_path):
    """Explicit None input (GB0236), data-dependent op (GB0251); a forward mark is made effective."""
    script = write(tmp_path, LIMITS_SCRIPT)
    code, out, err = run_main("check", script, "-n", "Block.forward,takes_none,data_dep", "-q")
    assert code == EXIT_CHECK_FAILED, out + err
    assert "nstviz registers a no-op forward pre-hook for the run" in out
    assert "(GB0236)" in out and "(GB0251)" in out and "DataDependentOutputException" in out
    assert "2 break(s) introduced by the nonstrict run" in out
    assert "breaks: 1 resolved, 3 remaining, 2 introduced" in out  # Block.forward's break is gone
    assert "--nonstrict Block.forward never applied" not in out
    for name in ("takes_none", "data_dep"):
        assert f"--nonstrict {name} never applied" in out
    assert out.count("registers a no-op forward pre-hook") == 1  # each warning once


def test_auto_finds_the_helper_and_prints_the_code(tmp_path):
    script = write(
        tmp_path,
        """
        import torch


        def helper(x):
            torch._dynamo.graph_break()
            return x.sin() * 2


        @torch.compile(backend="eager")
        def f(x):
            return helper(x) + 1


        y = f(torch.ones(4))
        """,
    )
    code, out, err = run_main("check", script, "--auto", "--max-attempts", "2", "--fail-on-break", "-q")
    assert code == EXIT_OK, out + err
    assert "improved  helper: breaks 1 -> 0, outputs match" in out
    assert f"helper = {nonstrict_trace_spelling()}(helper)" in out


def test_show_output_lets_the_scripts_prints_through(tmp_path, capsys):
    script = write(tmp_path, HELPER_SCRIPT)
    code, out, _ = run_main(
        "run", script, "x", "-n", "helper", "--show-output", "--json", tmp_path / "r.json", "-q"
    )
    assert code == EXIT_OK
    assert capsys.readouterr().out.count("argv ['x']") == 2  # once per run
    assert "kept in the report" not in out


def test_run_without_marks_shows_the_breaks_as_written(tmp_path):
    """`nstviz run train.py` as a newcomer types it: no --nonstrict/--auto, a baseline-only report."""
    from nstviz.render.html import extract_report_json

    write(tmp_path, HELPER_SCRIPT, "train.py")
    proc = subprocess.run(
        [sys.executable, "-m", "nstviz", "run", "train.py", "-q"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )
    assert proc.returncode == EXIT_OK, proc.stderr[-3000:]
    out = proc.stdout
    lines = out.splitlines()
    assert lines[0] == "nothing was marked (baseline only), 2 breaks, 3 graphs, outputs not checked (no second run to compare with)"
    assert lines[1].split() == ["baseline"]  # one column: no nonstrict run
    breaks = {tuple(line.split()[:3]) for line in lines if line.startswith("  break ")}
    assert breaks == {("break", "GB0025", "train.py:9"), ("break", "GB0025", "train.py:14")}  # helper, other
    assert "resolved" not in out and "remaining" not in out  # no diff: there is nothing to diff with
    next_step = (
        "note: This shows the breaks as written. To see what nonstrict_trace changes: `nstviz run train.py --auto` "
        "(nstviz picks functions to mark and tries them), or `--nonstrict NAME` (e.g. --nonstrict "
    )
    assert next_step in out, out
    assert "the script printed 1 line(s): kept in the report" in out  # one run, not "per run"
    assert lines[-1] == str(tmp_path / "train.nstviz.html")

    page = (tmp_path / "train.nstviz.html").read_text(encoding="utf-8")
    report = Report.from_json(extract_report_json(page))
    assert list(report.runs) == ["baseline"]
    assert {(b.gb_id, b.location.function) for b in report.runs["baseline"].breaks} == {
        ("GB0025", "helper"), ("GB0025", "other")
    }
    assert report.diff.resolved == report.diff.introduced == ()  # (the viewer shows no status either)
    assert report.headline.chips[0].text == "nothing was marked (baseline only)"
    note = next(n for n in report.notes if n.startswith("This shows the breaks as written."))
    assert note.endswith(("(e.g. --nonstrict helper: the function of the top break).",
                          "(e.g. --nonstrict other: the function of the top break)."))
    assert "To see what nonstrict_trace changes" in page  # the page's static summary says it too


def test_auto_with_nothing_recommended_runs_the_baseline_only(tmp_path):
    script = write(tmp_path, """
        import torch


        class Printer(torch.nn.Module):  # a compiled module's forward: no mark is proposed for it
            def forward(self, x):
                y = x.sin()
                print("a break nothing removes")
                return y.cos()


        m = torch.compile(Printer(), backend="eager")
        y = m(torch.ones(3))
    """)
    code, out, err = run_main("run", script, "--auto", "--json", tmp_path / "r.json", "--quiet")
    assert code == EXIT_OK, err
    report = Report.load_json(tmp_path / "r.json")
    assert list(report.runs) == ["baseline"]
    table = out.split("\n\n")[0]
    assert table.splitlines()[0] == (
        "nothing was marked (baseline only), 1 break, 2 graphs, outputs not checked (no second run to compare with)"
    )
    assert "so the nonstrict run was not made: it would repeat the baseline." in out
    code, out, err = run_main("check", script, "--auto", "--quiet")
    assert code == EXIT_CHECK_FAILED
    assert "nothing was marked (the advisor recommended nothing), so there is no nonstrict run" in out + err
