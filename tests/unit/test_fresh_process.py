"""``tests/helpers/fresh.py``: each request runs in a process of its own, as ``python -c``/``-m`` would.

The paste checks rely on it: a recommendation pasted in one check must not be seen by the next
(explain "before" runs after explain "with the paste" in the same test process), and the
"no nstviz" paste must run without nstviz imported.
"""

from __future__ import annotations

import json
import os

from tests.helpers import fresh

PROBE = """
import json, os, sys, torch
print(json.dumps({
    "argv": sys.argv, "stdin": sys.stdin.read(), "cwd": os.getcwd(), "env": os.environ.get("NSTVIZ_PROBE"),
    "flag": torch._dynamo.config.capture_scalar_outputs, "nstviz": "nstviz" in sys.modules,
    "pasted": hasattr(torch, "_pasted_by_the_last_request"), "main": __name__,
}))
torch._dynamo.config.capture_scalar_outputs = True  # what a pasted recommendation does
torch._pasted_by_the_last_request = True
"""


def test_each_request_starts_clean_and_gets_its_own_argv_stdin_cwd_and_env(tmp_path):
    env = {**os.environ, "NSTVIZ_PROBE": "yes"}
    got = [json.loads(fresh.run(["-c", PROBE, "a", "b"], input="in", cwd=tmp_path, env=env).stdout) for _ in range(2)]
    assert got[0] == got[1] == {
        "argv": ["-c", "a", "b"], "stdin": "in", "cwd": str(tmp_path), "env": "yes",
        "flag": False, "nstviz": False, "pasted": False, "main": "__main__",
    }


def test_exit_codes_errors_and_modules_as_python_gives_them():
    assert fresh.run(["-c", "import sys; print('out'); sys.exit(3)"]).returncode == 3
    raised = fresh.run(["-c", "raise ValueError('boom')"])
    assert raised.returncode == 1 and raised.stderr.rstrip().endswith("ValueError: boom")
    module = fresh.run(["-m", "json.tool"], input='{"a": 1}')
    assert (module.returncode, json.loads(module.stdout)) == (0, {"a": 1})


def test_a_torch_variable_torch_reads_at_import_gets_a_real_new_process():
    parent = ["-c", "import os; print(os.getppid())"]
    assert fresh.run(parent).stdout.strip() != str(os.getpid())  # forked by the server
    env = {**os.environ, "TORCH_LOGS": "graph_breaks"}
    assert fresh.run(parent, env=env).stdout.strip() == str(os.getpid())  # started here
