"""Run pasted code in a fresh Python process and read explain's graph count back."""

from __future__ import annotations

import inspect
import json
import os
import textwrap
from pathlib import Path

from tests.helpers import fresh

REPO = Path(__file__).resolve().parents[2]


def graphs_in_fresh_process(defs: list[object], paste: str, call: str, setup: str = "") -> int:
    """Define ``defs`` (their source), paste ``paste`` after them, and count ``explain``'s graphs of ``call``."""
    script = "\n\n".join([
        "import math\nimport numpy as np\nimport torch\n" + setup,
        *(textwrap.dedent(inspect.getsource(d)) for d in defs),  # type: ignore[arg-type]
        paste,
        textwrap.dedent(f"""
            import json, sys
            torch.manual_seed(0)
            fn, args = {call}
            e = torch._dynamo.explain(fn)(*args)
            print(json.dumps({{"graphs": e.graph_count}}))
        """),
    ])
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = fresh.run(["-c", script], timeout=240, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return int(json.loads(proc.stdout.strip().splitlines()[-1])["graphs"])
