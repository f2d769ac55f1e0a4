"""What a candidate returns, seen in an eager run: a mark that cannot return it is refused untried.

``nonstrict_trace`` returns only tensors, numbers, strings and pytrees of them (torch's
``flat_apply.is_graphable``): a helper returning a numpy array fails every mark and every adapter
of it (GB "Unsupported output type for nonstrict_trace-ed function"), one whole compiled run each.
Helpers that use numpy (BigBird's random block masks, SpecAugment's ``_compute_mask_indices``)
are watched during one eager run of the code on its input sets; those seen returning a numpy
value that is not a Python number get the reason as a pre-check problem. User classes are not
refused here: the advisor can register them with pytree (tried after the mark fails).
"""

from __future__ import annotations

import contextlib
import inspect
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from nstviz.advisor.attempt import Attempt
from nstviz.advisor.rewrites._source import installed, raw_function
from nstviz.capture import _torch_compat

__all__ = ["refuse_unreturnable"]


def refuse_unreturnable(candidates: Sequence[Attempt], run_eager: Callable[[], bool] | None) -> None:
    """Give each mark seen returning a numpy value the reason as a problem.

    ``run_eager`` runs the code eagerly on its input sets (:meth:`nstviz.capture.trials.Trials.run_eager`,
    state restored after); None, or a run that fails, refuses nothing. Only marks whose function
    names numpy are watched (no eager run when none does).
    """
    watched = [
        p for p in candidates
        if p.kind == "nonstrict" and p.obj is not None and (not p.problems or p.none_args) and _names_numpy(p.obj)
    ]
    if run_eager is None or not watched:
        return
    seen = _returned_numpy([p.obj for p in watched], run_eager)
    for p, type_name in zip(watched, seen, strict=True):
        if type_name is None:
            continue
        p.problems.append(
            f"it returns a {type_name} (seen in an eager run of the code): nonstrict_trace returns only "
            "tensors, numbers, strings and lists/tuples/dicts of them, so neither a mark nor an adapter "
            "of it can work; return torch.as_tensor(...) of it, or mark a caller that turns it into tensors"
        )
        p.none_args = False  # an adapter for its None inputs would fail on the output the same way


def _names_numpy(fn: Any) -> bool:
    """Whether the function's code (nested functions included) looks up numpy or a numpy function."""
    try:
        raw = raw_function(fn)
    except Exception:  # not a plain function underneath
        return False
    glb = getattr(raw, "__globals__", {})
    codes = [raw.__code__]
    while codes:
        code = codes.pop()
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        for name in code.co_names:
            value = glb.get(name)
            where = value.__name__ if inspect.ismodule(value) else getattr(value, "__module__", None)
            if isinstance(where, str) and where.split(".")[0] == "numpy":
                return True
    return False


def _returned_numpy(objs: Sequence[Any], run_eager: Callable[[], bool]) -> list[str | None]:
    """Per function, the type of the first numpy value (not a Python number) it returned, or None."""
    seen: list[str | None] = [None] * len(objs)
    try:
        with contextlib.ExitStack() as stack:
            for k, obj in enumerate(objs):
                stack.enter_context(_watching(obj, k, seen))
            ran = run_eager()
    except Exception:  # a function that cannot be wrapped, or the run itself: nothing is refused
        return [None] * len(objs)
    return seen if ran else [None] * len(objs)


@contextlib.contextmanager
def _watching(fn: Any, k: int, seen: list[str | None]) -> Iterator[None]:
    """Every call of ``fn`` notes, in ``seen[k]``, a numpy value among its output's pytree leaves."""
    raw = raw_function(fn)
    inner = types.FunctionType(raw.__code__, raw.__globals__, raw.__name__, raw.__defaults__, raw.__closure__)
    inner.__kwdefaults__ = raw.__kwdefaults__

    def watcher(*args: Any, **kwargs: Any) -> Any:
        out = inner(*args, **kwargs)
        if seen[k] is None:
            seen[k] = next((_type_name(x) for x in _torch_compat.output_leaves(out) if _unreturnable_numpy(x)), None)
        return out

    watcher.__qualname__, watcher.__name__, watcher.__module__ = raw.__qualname__, raw.__name__, raw.__module__
    with installed(raw, watcher):  # type: ignore[arg-type]
        yield


def _unreturnable_numpy(value: Any) -> bool:
    """A numpy value torch cannot put in an FX graph (``np.float64`` is a float: it can)."""
    return (type(value).__module__ or "").split(".")[0] == "numpy" and not _torch_compat.nonstrict_can_return(value)


def _type_name(value: Any) -> str:
    t = type(value)
    return f"{t.__module__}.{t.__qualname__}"
