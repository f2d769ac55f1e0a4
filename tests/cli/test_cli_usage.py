"""The nstviz command's parsing, errors and exit codes (no capture needed)."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from nstviz.cli.main import main
from nstviz.cli.script import EXIT_OK, EXIT_USAGE
from nstviz.offline.script_main import as_main
from nstviz.report.model import SCHEMA_VERSION


def run_main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def assert_one_line_error(err: str, *fragments: str) -> None:
    lines = err.strip().splitlines()
    assert lines[0].startswith("nstviz: error: "), err
    assert len(lines) <= 2 and all(line.startswith("  hint: ") for line in lines[1:]), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err


@pytest.mark.parametrize("command", ["demo", "run", "view", "check"])
def test_command_help_has_examples_and_exit_codes(command):
    code, out, _ = run_main(command, "--help")
    assert code == EXIT_OK
    assert f"nstviz {command}" in out
    assert "example" in out and "exit codes:" in out and "130" in out


def test_top_level_help_and_no_arguments():
    code, out, _ = run_main("--help")
    assert code == EXIT_OK and "demo" in out and "check" in out and "exit codes:" in out
    code, _, err = run_main()
    assert code == EXIT_USAGE and "usage: nstviz" in err


def test_unknown_command():
    code, _, err = run_main("frobnicate")
    assert code == EXIT_USAGE
    assert_one_line_error(err, "unknown command 'frobnicate'", "commands: demo, run, view, check")


def test_unknown_option_is_one_line_with_a_hint(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("x = 1\n")
    code, _, err = run_main("run", str(script), "--nonstrict", "f", "--frob")
    assert code == EXIT_USAGE
    assert_one_line_error(err, "--frob", "nstviz run --help")


def test_missing_script(tmp_path):
    code, _, err = run_main("run", str(tmp_path / "nope.py"), "--nonstrict", "f")
    assert code == EXIT_USAGE
    assert_one_line_error(err, "no such script", "nope.py")


def test_folder_instead_of_script(tmp_path):
    code, _, err = run_main("check", str(tmp_path), "--nonstrict", "f")
    assert code == EXIT_USAGE
    assert_one_line_error(err, "give a Python file, not a folder")


def test_syntax_error_names_file_and_line(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("import torch\n\ndef f(:\n    pass\n")
    code, _, err = run_main("run", str(script), "--nonstrict", "f")
    assert code == EXIT_USAGE
    assert_one_line_error(err, "broken.py:3: syntax error")


def test_check_needs_something_to_check(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("raise SystemExit('must not run')\n")
    code, _, err = run_main("check", str(script))
    assert code == EXIT_USAGE
    assert_one_line_error(err, "nothing to check", "--nonstrict NAME", "--auto", "nstviz run")


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "missing.py"],
        ["run", "missing.py", "--budget", "5", "-o", "/no/such/folder/r.html"],  # bad options too
        ["check", "missing.py"],  # nothing to check, either
        ["check", "missing.py", "-n", "f", "--max-attempts", "0", "--auto"],
        ["record", "missing.py"],
    ],
)
def test_a_missing_script_is_said_first_and_torch_is_not_loaded(tmp_path, argv):
    probe = "import sys\nfrom nstviz.cli.main import main\ncode = main(sys.argv[1:])\nprint('torch' in sys.modules)\nsys.exit(code)\n"
    proc = subprocess.run(
        [sys.executable, "-c", probe, *argv], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == EXIT_USAGE, proc.stderr
    assert proc.stdout == "False\n"  # said before torch is imported
    assert proc.stderr.startswith("nstviz: error: no such script: missing.py (the file does not exist)\n"), proc.stderr
    assert_one_line_error(proc.stderr, "hint: check the path")


def test_view_missing_and_corrupt_and_newer_reports(tmp_path):
    code, _, err = run_main("view", str(tmp_path / "missing.json"))
    assert code == EXIT_USAGE
    assert_one_line_error(err, "no such Report file")

    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _, err = run_main("view", str(bad))
    assert code == EXIT_USAGE
    assert_one_line_error(err, "bad.json", "not valid JSON")

    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({"schema_version": 10**6, "torch_version": "9", "runs": {}}))
    code, _, err = run_main("view", str(newer))
    assert code == EXIT_USAGE
    assert_one_line_error(err, "newer than this nstviz understands")
    assert not (tmp_path / "newer.html").exists()  # never a half-written page


def test_view_upgrades_a_version_1_report(tmp_path):
    import pathlib

    from nstviz.render.html import extract_report_json
    from nstviz.report import Report

    fixture = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "seed.report.json"
    data = json.loads(fixture.read_text(encoding="utf-8"))
    v1 = {k: v for k, v in data.items() if k not in ("headline", "counts")}
    v1["schema_version"] = 1
    for run in v1["runs"].values():
        for b in run["breaks"]:
            del b["id"]
    for items in v1["diff"].values():
        for b in items:
            del b["id"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(v1))
    code, out, err = run_main("view", str(old), "-o", str(tmp_path / "old.html"))
    assert code == EXIT_OK, err
    page = Report.from_json(extract_report_json((tmp_path / "old.html").read_text(encoding="utf-8")))
    assert page.schema_version == SCHEMA_VERSION == 3 and page == Report.load_json(fixture)
    assert out.splitlines()[0] == "1 break → 0, fullgraph failed → 1 graph, outputs match eager"


def test_as_main_sets_and_restores_interpreter_state(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("")
    argv, path, main_mod = sys.argv[:], sys.path[:], sys.modules["__main__"]
    with pytest.raises(RuntimeError), as_main(script, ["a", "--b"]) as ns:
        assert sys.argv == [str(script), "a", "--b"]
        assert sys.path[0] == str(tmp_path)
        assert sys.modules["__main__"].__dict__ is ns
        exec(compile("import sys\nname = __name__", str(script), "exec"), ns)
        assert ns["name"] == "__main__" and ns["__file__"] == str(script)
        raise RuntimeError("user code failed")
    assert sys.argv == argv and sys.path == path and sys.modules["__main__"] is main_mod


def test_python_dash_m_nstviz_version():
    proc = subprocess.run(
        [sys.executable, "-m", "nstviz", "--version"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("nstviz ") and "torch 2." in proc.stdout


def test_usage_error_through_the_real_process(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "nstviz", "run", str(tmp_path / "x.py"), "-n", "f"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == EXIT_USAGE
    assert proc.stdout == ""
    assert_one_line_error(proc.stderr, "no such script")


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--budget", "0", "--auto"], "positive number of seconds"),
        (["--max-attempts", "0", "--auto"], "at least 1"),
        (["--budget", "5"], "only apply with --auto"),
        (["-o", "/no/such/folder/r.html"], "does not exist"),
        (["--json", "."], "is a folder"),
    ],
)
def test_bad_option_values_are_refused_before_running(tmp_path, extra, fragment):
    script = tmp_path / "s.py"
    script.write_text("raise SystemExit('must not run')\n")
    code, _, err = run_main("run", str(script), "-n", "f", *extra)
    assert code == EXIT_USAGE
    assert_one_line_error(err, fragment)
