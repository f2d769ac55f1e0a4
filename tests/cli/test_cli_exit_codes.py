"""Exit codes 5 (a bug in nstviz) and 130 (interrupted), from real subprocesses."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from nstviz.cli.script import EXIT_INTERNAL, EXIT_INTERRUPTED

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}

SCRIPT = """
import torch

def helper(x):
    torch._dynamo.graph_break()
    return x * 2

@torch.compile(backend="eager")
def f(x):
    return helper(x) + 1

y = f(torch.ones(3))
"""

# nstviz's own break diff fails (a fault injected into nstviz, as a bug there would): the command
# must say it is nstviz's bug, show the traceback, and exit 5
FAULTY_NSTVIZ = """
import sys
import nstviz.passes.assemble

def broken_diff(*args, **kwargs):
    raise RuntimeError("injected: nstviz's break diff is broken")

nstviz.passes.assemble.diff_breaks = broken_diff
from nstviz.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_bug_in_nstviz_exits_5_with_its_traceback(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(SCRIPT, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-c", FAULTY_NSTVIZ, "run", str(script), "--nonstrict", "helper", "--quiet",
         "--json", str(tmp_path / "r.json")],
        cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == EXIT_INTERNAL == 5, proc.stderr[-3000:]
    lines = proc.stderr.rstrip().splitlines()
    assert "nstviz: internal error (this is a bug in nstviz; please report it with this traceback)" in lines
    assert lines[-1] == "RuntimeError: injected: nstviz's break diff is broken"
    assert "in broken_diff" in proc.stderr  # the whole traceback is shown
    assert not (tmp_path / "r.json").exists()  # nothing half-written


SLOW_SCRIPT = """
import time
from pathlib import Path

import torch

@torch._dynamo.disable
def wait_here():
    Path("entered").touch()  # the capture is running the script's code now
    time.sleep(300)

def helper(x):
    wait_here()
    return x * 2

@torch.compile(backend="eager")
def f(x):
    return helper(x) + 1

y = f(torch.ones(3))
"""


def test_ctrl_c_exits_130_and_says_interrupted(tmp_path: Path) -> None:
    script = tmp_path / "slow.py"
    script.write_text(textwrap.dedent(SLOW_SCRIPT), encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "nstviz", "run", str(script), "--nonstrict", "helper", "--quiet",
         "--json", str(tmp_path / "r.json")],
        cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # its own process group: the signal reaches it only
    )
    try:
        deadline = time.monotonic() + 300  # a safety net for a broken run, not a threshold
        while not (tmp_path / "entered").exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the script never started under capture"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)  # a real Ctrl-C, while the capture runs the script
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == EXIT_INTERRUPTED == 130, err[-3000:]
    assert err.endswith("\nnstviz: interrupted\n"), err[-3000:]
    assert "Traceback" not in err
    assert out == ""
    assert not (tmp_path / "r.json").exists()
