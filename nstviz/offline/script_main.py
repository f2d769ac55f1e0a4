"""Running a script as ``python SCRIPT ARGS`` would, inside this process (torch-free).

Used by ``nstviz run``/``check`` (:mod:`nstviz.cli.script`) and ``nstviz record``
(:mod:`nstviz.offline.record`).
"""

from __future__ import annotations

import builtins
import sys
import types
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def as_main(script: Path, argv: Sequence[str]) -> Iterator[dict[str, Any]]:
    """Give a script what ``python SCRIPT ARGS`` gives it, and put everything back after.

    Sets ``sys.argv``, puts the script's folder first on ``sys.path`` and installs a fresh
    ``__main__`` module (as :mod:`runpy` does) whose namespace is yielded.
    """
    module = types.ModuleType("__main__")
    module.__dict__.update({"__file__": str(script), "__builtins__": builtins, "__cached__": None})
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    saved_main = sys.modules.get("__main__")
    sys.argv = [str(script), *argv]
    sys.path.insert(0, str(script.parent))
    sys.modules["__main__"] = module
    try:
        yield module.__dict__
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
        else:  # pragma: no cover - the interpreter always has one
            sys.modules.pop("__main__", None)
