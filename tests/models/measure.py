"""Measure the corpus by hand: baseline, and marking each function on each break's stack.

Run: ``PYTHONPATH=$PWD python3 tests/models/measure.py [job ...] [--json out.json]``

Independent of nstviz's advisor: for every job, the baseline compile (``backend="eager"``),
then one compile per function found on the stacks of the baseline's breaks (innermost
first; found by file and line in its module, classes' methods included), marked non-strict
by id; an ``nn.Module.forward`` is made effective with a no-op forward pre-hook on the
model's instances of its class. Also the breaks' config hints
(``capture_scalar_outputs`` / ``capture_dynamic_output_shape_ops``). Each attempt records
Dynamo's own counters (graph breaks, unique graphs), the first line of the innermost error
and whether the outputs equal the baseline's (and eager's). The figures in
``test_corpus_*.py`` were written down from this script's output.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import types
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from tests.models.corpus import JOBS, Job, seed_all

CONFIG_REMEDIES = {
    "capture_scalar_outputs": {"capture_scalar_outputs": True},
    "capture_dynamic_output_shape_ops": {"capture_dynamic_output_shape_ops": True},
    "both": {"capture_scalar_outputs": True, "capture_dynamic_output_shape_ops": True},
}


@dataclass
class Outcome:
    """One compile of a job."""

    label: str
    breaks: int = 0
    sites: int = 0
    graphs: int = 0
    error: str | None = None
    match_baseline: bool | None = None
    match_eager: bool | None = None
    seconds: float = 0.0


@dataclass
class JobResult:
    name: str
    baseline: Outcome
    attempts: list[Outcome] = field(default_factory=list)


def flat_tensors(value: Any) -> list[Any]:
    """The tensors (or None) of a model output, in a fixed order."""
    if isinstance(value, torch.Tensor):
        return [value.detach()]
    if value is None:
        return [None]
    if isinstance(value, dict):
        return [t for k in value for t in flat_tensors(value[k])]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in flat_tensors(v)]
    return []


def same(a: list[Any], b: list[Any]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if (x is None) != (y is None):
            return False
        if x is None:
            continue
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if x.numel() and not torch.allclose(x.float(), y.float(), atol=1e-5, rtol=1e-4, equal_nan=True):
            return False
    return True


def innermost_message(exc: BaseException) -> str:
    seen = 0
    while seen < 10:
        nxt = exc.__cause__ or exc.__context__
        if nxt is None:
            break
        exc, seen = nxt, seen + 1
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:200]


def call(model: torch.nn.Module, inputs: dict[str, Any], compiled: bool) -> Any:
    seed_all(1)
    target = torch.compile(model, backend="eager") if compiled else model
    # grad mode as nstviz.compare runs it (enabled): under no_grad some jobs take other paths
    # (Reformer eval: 0 breaks under no_grad, 4 distinct with grad, its reversible autograd.Function)
    ctx = torch.no_grad() if os.environ.get("MEASURE_NO_GRAD") and not model.training else contextlib.nullcontext()
    with ctx:
        return target(**inputs)


def compile_once(label: str, model, inputs, reference=None, eager=None) -> tuple[Outcome, Any]:
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    out = Outcome(label)
    t0 = time.monotonic()
    value = None
    try:
        value = flat_tensors(call(model, inputs, True))
    except Exception as exc:
        out.error = innermost_message(exc)
    out.seconds = round(time.monotonic() - t0, 2)
    out.breaks = sum(counters["graph_break"].values())
    out.sites = len(counters["graph_break"])
    out.graphs = counters["stats"]["unique_graphs"]
    if value is not None and reference is not None:
        out.match_baseline = same(value, reference)
    if value is not None and eager is not None:
        out.match_eager = same(value, eager)
    return out, value


def break_frames(model, inputs) -> list[tuple[str, int, str]]:
    """(file, line, function) of every frame on the baseline's break stacks, innermost first."""
    import nstviz

    report = nstviz.compare(model, check=False, **inputs)
    frames: list[tuple[str, int, str]] = []
    for b in report.runs["baseline"].breaks:
        for f in reversed(b.stack or (b.location,)):
            key = (f.file, f.line, f.function)
            if key not in frames:
                frames.append(key)
    return frames


def find_function(file: str, line: int, name: str) -> tuple[str, Any, type | None] | None:
    """The function object defined at file:line named ``name``, from its module (or None)."""
    if "/torch/" in file or name.startswith("<"):
        return None
    for mod in list(sys.modules.values()):
        if os.path.abspath(getattr(mod, "__file__", "") or "") != os.path.abspath(file):
            continue
        owners: list[tuple[str, Any, type | None]] = [("", mod, None)]
        owners += [(f"{k}.", v, v) for k, v in vars(mod).items() if isinstance(v, type) and v.__module__ == mod.__name__]
        for prefix, owner, cls in owners:
            for attr, value in list(vars(owner).items()):
                fn = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
                for _ in range(8):  # decorators made with functools.wraps: the function on the stack
                    code = getattr(fn, "__code__", None)
                    if isinstance(code, types.CodeType) and code.co_name == name:
                        lines = [ln for _, _, ln in code.co_lines() if ln is not None]
                        if code.co_firstlineno <= line <= max(lines, default=0):
                            return f"{mod.__name__.split('.')[-1]}.{prefix}{attr}", fn, cls
                    fn = getattr(fn, "__wrapped__", None)
                    if fn is None:
                        break
    return None


def _wraps_chain(fn: Any) -> list[Any]:
    out = [fn]
    while hasattr(out[-1], "__wrapped__") and len(out) < 8:
        out.append(out[-1].__wrapped__)
    return out


@contextlib.contextmanager
def marked(fn: Any, cls: type | None, model: torch.nn.Module):
    from nstviz.capture import _torch_compat

    ids = {id(fn)} - _torch_compat.nonstrict_ids()
    hooks = []
    if cls is not None and fn.__name__ == "forward":
        hooks = [m.register_forward_pre_hook(lambda mod, args: None) for m in model.modules() if isinstance(m, cls)]
    _torch_compat.mark_ids(ids)
    try:
        yield
    finally:
        _torch_compat.unmark_ids(ids)
        for h in hooks:
            h.remove()


def measure(job: Job, remedies: bool = True) -> JobResult:
    model, inputs = job.make()
    eager = flat_tensors(call(model, inputs, False))
    base, ref = compile_once("baseline", model, inputs, eager=eager)
    base.match_baseline = True
    result = JobResult(job.name, base)
    seen: set[int] = set()
    entry = set(map(id, _wraps_chain(type(model).forward)))
    for file, line, name in break_frames(model, inputs):
        found = find_function(file, line, name)
        if found is None or id(found[1]) in seen or id(found[1]) in entry or found[0].startswith("__main__"):
            continue  # not inside the compiled region: the model's own entry, or this script
        seen.add(id(found[1]))
        label, fn, cls = found
        with marked(fn, cls, model):
            out, _ = compile_once(label, model, inputs, reference=ref, eager=eager)
        result.attempts.append(out)
    if remedies:
        for label, flags in CONFIG_REMEDIES.items():
            with torch._dynamo.config.patch(**flags):
                out, _ = compile_once(f"config:{label}", model, inputs, reference=ref, eager=eager)
            result.attempts.append(out)
    return result


def main(argv: list[str]) -> None:
    out_path = None
    if "--json" in argv:
        i = argv.index("--json")
        out_path = argv[i + 1]
        argv = argv[:i] + argv[i + 2 :]
    names = argv or list(JOBS)
    results = []
    for name in names:
        r = measure(JOBS[name])
        results.append(asdict(r))
        b = r.baseline
        print(f"{name}: baseline breaks={b.breaks} sites={b.sites} graphs={b.graphs} eager={b.match_eager} "
              f"err={b.error} ({b.seconds}s)", flush=True)
        for a in r.attempts:
            print(f"    {a.label}: breaks={a.breaks} sites={a.sites} graphs={a.graphs} base={a.match_baseline} "
                  f"eager={a.match_eager} err={a.error} ({a.seconds}s)", flush=True)
    if out_path:
        with open(out_path, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
