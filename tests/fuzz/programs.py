"""Generated programs with graph breaks of known kinds, for the fuzz corpus.

A program is a compiled ``f(x)`` that calls 1-4 helpers in sequence; each helper is drawn from
:data:`KINDS`, each breaking (or not) in a known way with a known GB id. Programs are seeded,
so a failing seed reproduces exactly.
"""

from __future__ import annotations

import linecache
import random
from dataclasses import dataclass
from typing import Any

# kind -> (helper source, GB id of the break it causes in the baseline, or None)
KINDS: dict[str, tuple[str, str | None]] = {
    "graph_break": ("def h{i}(x):\n    torch._dynamo.graph_break()\n    return x + {i}\n", "GB0025"),
    "print": ("def h{i}(x):\n    print('h{i}')\n    return x * 2\n", "GB0059"),
    "c_call": ("def h{i}(x):\n    zlib.crc32(b'abc')\n    return x - 1\n", "GB0007"),
    "item": ("def h{i}(x):\n    return x * x.sum().item()\n", "GB0124"),
    "plain": ("def h{i}(x):\n    return x.sin() + {i}\n", None),
    "non_pytree": ("def h{i}(x, box):\n    return x + box.t\n", None),  # breaks only when marked (GB0236)
}
BREAK_LINE = {"graph_break": 2, "print": 2, "c_call": 2, "item": 2}  # line of the break within a helper


@dataclass(frozen=True)
class Program:
    """One generated program and what its baseline must show."""

    seed: int
    kinds: tuple[str, ...]
    capture_scalars: bool
    source: str
    filename: str

    def namespace(self) -> dict[str, Any]:
        """Exec the program in a fresh namespace (registered with linecache for locations)."""
        linecache.cache[self.filename] = (len(self.source), None, self.source.splitlines(True), self.filename)
        ns: dict[str, Any] = {"__name__": "__main__"}
        exec(compile(self.source, self.filename, "exec"), ns)
        return ns

    def expected_breaks(self) -> set[tuple[int, str]]:
        """``(line, GB id)`` of every break the baseline must report."""
        out = set()
        for i, kind in enumerate(self.kinds):
            gb = KINDS[kind][1]
            if gb is None or (kind == "item" and self.capture_scalars):
                continue
            out.add((self.helper_line(i) + BREAK_LINE[kind] - 1, gb))
        return out

    def helper_line(self, i: int) -> int:
        """First line of helper ``h{i}``."""
        lines = self.source.splitlines()
        return next(n for n, line in enumerate(lines, start=1) if line.startswith(f"def h{i}("))


def generate(seed: int) -> Program:
    """The program of ``seed``."""
    rnd = random.Random(seed)
    kinds = tuple(rnd.choice(list(KINDS)) for _ in range(rnd.randint(1, 4)))
    source = "import torch, zlib\n\nclass Box:\n    def __init__(self, t):\n        self.t = t\n\n"
    source += "".join(KINDS[k][0].format(i=i) + "\n" for i, k in enumerate(kinds))
    source += "def f(x):\n    box = Box(torch.ones(3))\n"
    source += "".join(f"    x = h{i}(x, box)\n" if k == "non_pytree" else f"    x = h{i}(x)\n" for i, k in enumerate(kinds))
    source += "    return x\n"
    return Program(seed, kinds, rnd.random() < 0.3, source, f"<fuzz-program-{seed}>")
