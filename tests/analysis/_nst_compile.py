"""A small, real try_marks for tests: plain torch.compile, marks by trace-rules id sets.

It mirrors what the capture core does (reset, mark by id, run, unmark) with public-ish
pieces only: ``torch._dynamo.explain`` for the breaks and a plain ``torch.compile`` with the
``aot_eager`` backend for the outputs (it inlines non-strict
functions like nstviz's record backend and inductor do). It exists so the advisor is tested against real compiles
before (and independently of) the capture core.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import torch
from torch._dynamo import trace_rules

from nstviz.capture.outputs import build_output_check, compare_outputs, snapshot_outputs
from nstviz.report import Break, Graph, Location, OutputCheck, Run

_GB = re.compile(r"gb(\d{4})\.html", re.IGNORECASE)


@contextlib.contextmanager
def marked(fns: tuple[Callable, ...]) -> Iterator[None]:
    ids = [id(getattr(f, "__func__", f)) for f in fns]
    sets = (trace_rules._allowed_callable_ids, trace_rules._nonstrict_trace_callable_ids)
    added = [(s, i) for s in sets for i in ids if i not in s]
    for s, i in added:
        s.add(i)
    torch._dynamo.reset()
    try:
        yield
    finally:
        for s, i in added:
            s.remove(i)
        torch._dynamo.reset()


def seed_all(seed: int) -> None:
    import random

    import numpy as np

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def record(name: str, fn: Callable, args: tuple, marks: tuple[Callable, ...] = ()) -> tuple[Run, Any]:
    """Run ``fn(*args)`` compiled with ``marks`` non-strict; return (Run with breaks and graphs, output)."""
    with marked(marks):
        try:
            explained = torch._dynamo.explain(fn)(*args)
        except Exception as exc:
            return Run(name=name, error=f"{type(exc).__name__}: {exc}", error_type=type(exc).__name__), None
        torch._dynamo.reset()
        seed_all(0)
        out = torch.compile(fn, backend="aot_eager")(*args)
    distinct: dict[tuple, Break] = {}
    for br in explained.break_reasons:
        stack = tuple(Location(file=fs.filename, line=fs.lineno or 0, function=fs.name) for fs in br.user_stack)
        if not stack:
            continue
        m = _GB.search(br.reason)
        gb = f"GB{m.group(1)}" if m else None
        key = (stack[-1].file, stack[-1].line, gb)
        if key in distinct:
            old = distinct[key]
            distinct[key] = dataclasses.replace(old, count=old.count + 1)
            continue
        distinct[key] = Break(
            gb_id=gb, reason=br.reason.strip().splitlines()[0], detail=br.reason, count=1, fatal=False,
            location=stack[-1], stack=stack,
        )
    # explain's graph_count: what the advisor's predicate counts (Dynamo graphs)
    graphs = tuple(Graph(id=f"{i}/0:dynamo", level="dynamo", frame_id=i, compile_id=0) for i in range(explained.graph_count))
    return Run(name=name, breaks=tuple(distinct.values()), graphs=graphs), snapshot_outputs({"return": out})


def make_try_marks(fn: Callable, args: tuple, baseline_out: Mapping[str, Any], log: list | None = None):
    def try_marks(marks: tuple[Callable, ...], run_name: str) -> tuple[Run, OutputCheck]:
        if log is not None:
            log.append((run_name, marks))
        run, out = record(run_name, fn, args, marks)
        if out is None:
            return run, build_output_check([])
        cmp = compare_outputs(baseline_out, out, left_name="baseline", right_name=run_name)
        return run, build_output_check([cmp])

    return try_marks


def resolver(namespace: Mapping[str, Any]) -> Callable[[str], Any]:
    def resolve(name: str) -> Any:
        head, *rest = name.split(".")
        obj = namespace.get(head)
        for part in rest:
            obj = getattr(obj, part, None)
        return obj

    return resolve
