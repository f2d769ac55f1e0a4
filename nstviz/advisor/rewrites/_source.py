"""Source of a live function; a rewritten ``def`` rebuilt with its globals and closure.

:func:`installed` puts it where the function is looked up and always restores it.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import sys
import textwrap
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["REWRITE_FILE", "FunctionSource", "RewriteError", "build_function", "function_source", "installed"]

_MISSING = object()

REWRITE_FILE = "<nstviz rewrite of "
"""How the file name of a rewritten function's code starts (then its qualname and ``>``)."""


class RewriteError(ValueError):
    """A function that cannot be rewritten (no source, not a plain function, ...)."""


def raw_function(fn: Any) -> types.FunctionType:
    """The plain function behind a method, static/class method or ``functools.wraps`` wrapper."""
    for _ in range(10):
        if isinstance(fn, (staticmethod, classmethod)) or inspect.ismethod(fn):
            fn = fn.__func__
        elif hasattr(fn, "__wrapped__"):
            fn = fn.__wrapped__
        else:
            break
    if not isinstance(fn, types.FunctionType):
        raise RewriteError(f"{fn!r} is not a Python function (got {type(fn).__name__})")
    return fn


@dataclass
class FunctionSource:
    """A function's parsed ``def``: the dedented text, its AST and where it starts in its file."""

    fn: types.FunctionType
    text: str
    tree: ast.FunctionDef
    firstlineno: int

    def local_line(self, line: int | None) -> int | None:
        """A file line number as a line of :attr:`text` (1-based), None when outside the def."""
        if line is None:
            return None
        local = line - self.firstlineno + 1
        return local if 1 <= local <= len(self.text.splitlines()) else None


def function_source(fn: Any) -> FunctionSource:
    """Parse the ``def`` of a live function (``inspect.getsource``), or raise :class:`RewriteError`."""
    raw = raw_function(fn)
    try:
        lines, first = inspect.getsourcelines(raw)
    except (OSError, TypeError) as e:
        raise RewriteError(f"no source for {raw.__qualname__}: {e}") from e
    text = textwrap.dedent("".join(lines))
    try:
        mod = ast.parse(text)
    except SyntaxError as e:
        raise RewriteError(f"cannot parse the source of {raw.__qualname__}: {e}") from e
    if len(mod.body) != 1 or not isinstance(mod.body[0], ast.FunctionDef) or mod.body[0].name != raw.__name__:
        raise RewriteError(f"{raw.__qualname__} is not a plain `def` (lambda or async?)")
    return FunctionSource(fn=raw, text=text, tree=mod.body[0], firstlineno=first)


def build_function(src: FunctionSource, new_def: ast.FunctionDef, extras: Mapping[str, Any]) -> types.FunctionType:
    """Compile ``new_def`` as a function with the original's globals, defaults and closure cells.

    ``extras`` are further names the body reads (``torch``, a custom op): they become closure
    cells of their own, so nothing is added to the user's module.
    """
    fn = src.fn
    # names the module already binds to the same object stay globals (then __code__ can be swapped)
    extras = {k: v for k, v in extras.items() if fn.__globals__.get(k, _MISSING) is not v}
    freevars = fn.__code__.co_freevars
    cells = dict(zip(freevars, fn.__closure__ or (), strict=False))
    outer = [*freevars, *(k for k in extras if k not in cells)]
    d = ast.FunctionDef(**{f: getattr(new_def, f) for f in new_def._fields})
    d.decorator_list = []
    factory = ast.FunctionDef(
        name="__nstviz_factory",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in outer], kwonlyargs=[],
                           kw_defaults=[], defaults=[]),
        body=[d, ast.Return(value=ast.Name(id=d.name, ctx=ast.Load()))],
        decorator_list=[], returns=None, type_params=[],
    )
    mod = ast.fix_missing_locations(ast.Module(body=[factory], type_ignores=[]))
    ns: dict[str, Any] = {}
    exec(compile(mod, f"{REWRITE_FILE}{fn.__qualname__}>", "exec"), {"__builtins__": __builtins__}, ns)
    code = next(c for c in ns["__nstviz_factory"].__code__.co_consts if isinstance(c, types.CodeType))
    closure = tuple(cells[n] if n in cells else types.CellType(extras[n]) for n in code.co_freevars)
    new = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, closure or None)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__, new.__module__, new.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
    new.__dict__.update(fn.__dict__)
    new.__nstviz_rewrite_of__ = fn  # type: ignore[attr-defined]
    return new


def _places(fn: types.FunctionType) -> list[tuple[Any, str, Any]]:
    """``(dict or class, name, current value)`` wherever ``fn`` is looked up by name."""
    out: list[tuple[Any, str, Any]] = []
    parts = fn.__qualname__.split(".")
    if "<locals>" in parts:
        return out
    if len(parts) == 1:
        seen: set[int] = set()
        for mod in list(sys.modules.values()):
            d = getattr(mod, "__dict__", None)
            if isinstance(d, dict) and id(d) not in seen and d.get(fn.__name__) is fn:
                seen.add(id(d))
                out.append((d, fn.__name__, fn))
        if fn.__globals__.get(fn.__name__) is fn and id(fn.__globals__) not in seen:
            out.append((fn.__globals__, fn.__name__, fn))
        return out
    owner: Any = sys.modules.get(fn.__module__)
    for p in parts[:-1]:
        owner = getattr(owner, p, None)
    if isinstance(owner, type):
        static = owner.__dict__.get(parts[-1], _MISSING)
        inner = static.__func__ if isinstance(static, (staticmethod, classmethod)) else static
        if inner is fn:
            out.append((owner, parts[-1], static))
    return out


def _wrapper_cells(fn: types.FunctionType) -> list[types.CellType]:
    """The closure cells through which a decorator's wrapper, where ``fn`` is looked up, calls ``fn``."""
    parts = fn.__qualname__.split(".")
    if "<locals>" in parts:
        return []
    owner: Any = sys.modules.get(fn.__module__)
    for p in parts[:-1]:
        owner = getattr(owner, p, None)
    obj = vars(owner).get(parts[-1]) if isinstance(owner, (type, types.ModuleType)) else None
    for _ in range(10):
        if not isinstance(obj, types.FunctionType) or obj is fn:
            return []
        cells = [c for c in obj.__closure__ or () if _holds(c, fn)]
        if cells:
            return cells
        obj = getattr(obj, "__wrapped__", None)
    return []


def _holds(cell: types.CellType, fn: types.FunctionType) -> bool:
    try:
        return cell.cell_contents is fn
    except ValueError:  # an empty cell
        return False


@contextlib.contextmanager
def installed(original: types.FunctionType, new: types.FunctionType) -> Iterator[None]:
    """Make every call of ``original`` run ``new`` while the block runs; restore exactly after.

    The original's ``__code__`` is swapped when the closures line up (every reference sees it);
    otherwise ``new`` replaces it where it is looked up (module globals, class attribute).
    """
    if new.__code__.co_freevars == original.__code__.co_freevars and all(
        a is b for a, b in zip(new.__closure__ or (), original.__closure__ or (), strict=False)
    ):
        old_code = original.__code__
        original.__code__ = new.__code__
        try:
            yield
        finally:
            original.__code__ = old_code
        return
    places = _places(original)
    cells = [] if places else _wrapper_cells(original)
    if cells:  # a decorated method (``@torch.no_grad()``): its wrapper calls the function from a cell
        for cell in cells:
            cell.cell_contents = new
        try:
            yield
        finally:
            for cell in cells:
                cell.cell_contents = original
        return
    if not places:
        raise RewriteError(
            f"cannot install the rewrite of {original.__qualname__}: it is not looked up by name "
            "(a nested function whose closure changed)"
        )
    done: list[tuple[Any, str, Any]] = []
    try:
        for place, name, old in places:
            value = type(old)(new) if isinstance(old, (staticmethod, classmethod)) else new
            if isinstance(place, dict):
                place[name] = value
            else:
                setattr(place, name, value)
            done.append((place, name, old))
        yield
    finally:
        for place, name, old in reversed(done):
            if isinstance(place, dict):
                place[name] = old
            else:
                setattr(place, name, old)
