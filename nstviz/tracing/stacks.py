r"""Whose code a file is (torch's, nstviz's, the standard library's, the user's), and user stacks.

One rule, used by live captures and by logs read on another machine alike: a file is classified
by the *shape* of its path, never by where torch is installed on the machine that reads it.

- torch: a ``torch`` (or ``functorch``/``torchgen``) folder right under ``site-packages`` or
  ``dist-packages`` (venvs, system Pythons, conda envs, Windows ``Lib\site-packages``), a conda
  package folder ``pkgs/pytorch-*``, or a source checkout: ``torch/`` followed by a folder or
  module only torch has (``_dynamo``, ``_inductor``, ``fx``...), or by a common one (``nn``,
  ``utils``, ``distributed``...) inside a folder named ``pytorch*``. A log also tells where its
  own torch was (:class:`RootLearner`), and a live capture where the running torch is
  (:func:`register_live_torch_root`): files under those roots are torch's.
- nstviz: ``nstviz/`` followed by one of its subpackages or modules (installed or a checkout),
  or this nstviz's own folder; ``nstviz/examples`` is user code (``nstviz demo``'s script).
- the standard library: ``lib/pythonX.Y/`` (``lib64``, ``pythonX.Yt``) not under
  ``site-packages``; ``Lib\`` on Windows; ``<frozen ...>`` modules; this Python's own stdlib.
- everything else is user code, third-party libraries included (their breaks are the user's),
  and so are generated names such as IPython cells (``<ipython-input-...>``).

Backslashes and drive letters are read as Windows paths wherever the log was recorded. This
module must not import torch (``nstviz ingest`` runs without it).
"""

from __future__ import annotations

import contextlib
import contextvars
import linecache
import os
import re
import sysconfig
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from nstviz.report.model import Location, SourceFile

FileKind = Literal["torch", "nstviz", "stdlib", "user"]

MAX_SOURCE_BYTES = 2_000_000
MAX_TOTAL_SOURCE_CHARS = 8_000_000
"""Source text kept in one Report, all files together (later files are truncated)."""

_INSTALL_DIRS = frozenset({"site-packages", "dist-packages"})
_TORCH_PACKAGES = frozenset({"torch", "functorch", "torchgen"})  # what the torch wheel installs
# Right under a `torch/` folder: names no other project has there (a checkout is torch's on these alone).
_TORCH_OWN = frozenset(
    {
        "_dynamo", "_inductor", "_functorch", "_higher_order_ops", "_subclasses", "_logging", "_prims",
        "_prims_common", "_refs", "_decomp", "_export", "_library", "_C", "_lazy", "_dispatch", "_strobelight",
        "_awaits", "_custom_op", "_numpy", "_vendor", "fx", "_guards.py", "_ops.py", "_tensor.py",
        "_tensor_str.py", "_jit_internal.py", "_compile.py", "_utils_internal.py", "_meta_registrations.py",
        "_utils.py", "_VF.py", "_classes.py", "_sources.py", "_custom_ops.py", "_vmap_internals.py",
        "_namedtensor_internals.py", "_linalg_utils.py", "_lowrank.py", "_streambase.py", "overrides.py",
        "_torch_docs.py", "_tensor_docs.py", "_storage_docs.py", "_size_docs.py", "_weights_only_unpickler.py",
    }
)  # fmt: skip
# Right under `torch/`: torch's, but common names; count inside a `pytorch*` checkout folder only.
_TORCH_COMMON = frozenset(
    {
        "nn", "utils", "distributed", "autograd", "cuda", "optim", "export", "compiler", "amp", "jit", "testing",
        "func", "ao", "onnx", "profiler", "sparse", "masked", "nested", "multiprocessing", "backends", "mps",
        "xpu", "cpu", "accelerator", "distributions", "special", "linalg", "fft", "signal", "package",
        "monitor", "quantization", "__init__.py", "functional.py", "library.py", "serialization.py",
        "random.py", "hub.py", "storage.py", "types.py", "return_types.py", "version.py",
    }
)  # fmt: skip
_NSTVIZ_PARTS = frozenset(
    {
        "capture", "offline", "analysis", "jupyter", "tracing", "schema", "passes", "advisor", "render", "cli", "report",
        "_gb_ids.py", "api.py", "cli.py", "report.py",
        "html.py", "__main__.py", "_cli_script.py", "_cli_terminal.py", "_where.py", "_introspect.py",
        "_summary.py", "_options.py", "_user_errors.py", "graph_export.py", "errors.py", "_text.py", "_version.py",
        "_progress.py",
    }
)  # fmt: skip
_STDLIB_DIR_RE = re.compile(r"^python\d+\.\d+t?$")
_DRIVE_RE = re.compile(r"^[A-Za-z]:/")


def _norm(path: str) -> str:
    return path.replace("\\", "/")


def _local_dir(path: str) -> str:
    return _norm(os.path.abspath(path)).rstrip("/") + "/"


_NSTVIZ_DIR = _local_dir(os.path.dirname(os.path.dirname(__file__)))
_EXAMPLES_DIR = _NSTVIZ_DIR + "examples/"
_LOCAL_STDLIB = _local_dir(sysconfig.get_paths()["stdlib"])


@dataclass
class PathRules:
    """Where the torch that wrote the stacks lives, when known (adds to the shape rule)."""

    torch_roots: tuple[str, ...] = ()
    """Folders whose files are torch's (normalized to ``/``, ending in ``/``)."""
    _cache: dict[str, FileKind] = field(default_factory=dict, repr=False)

    def add_torch_root(self, root: str) -> None:
        """Count every file under ``root`` (a ``.../torch`` folder) as torch's."""
        root = _norm(root).rstrip("/") + "/"
        if root not in self.torch_roots and root != "/":
            self.torch_roots = (*self.torch_roots, root)
            self._cache.clear()

    def classify(self, path: str | None) -> FileKind:
        """``"torch"``, ``"nstviz"``, ``"stdlib"`` or ``"user"`` for a file path (see the module)."""
        if not path:
            return "stdlib"  # no file: nothing of the user's to show
        kind = self._cache.get(path)
        if kind is None:
            if len(self._cache) > 100_000:
                self._cache.clear()
            kind = self._cache[path] = _classify(path, self.torch_roots)
        return kind


def _torch_by_shape(parts: Sequence[str], low: Sequence[str]) -> int | None:
    """Index of the ``torch`` folder in ``parts`` when the path's shape says it is torch's."""
    dirs = len(parts) - 1
    for i in range(dirs - 1, -1, -1):
        name = low[i]
        if i > 0 and low[i - 1] in _INSTALL_DIRS and name in _TORCH_PACKAGES:
            return i
        if i > 0 and low[i - 1] == "pkgs" and name.startswith("pytorch-"):
            return i  # a conda package folder: everything in it is torch's
        if parts[i] == "torch":
            nxt = parts[i + 1]
            if nxt in _TORCH_OWN:
                return i
            if nxt in _TORCH_COMMON and (i == 0 or low[i - 1].startswith("pytorch")):
                return i  # a checkout (`pytorch/torch/nn/...`) or a glog path relative to one (`torch/nn/...`)
    return None


def _classify(path: str, roots: Sequence[str]) -> FileKind:
    if path.startswith("<"):
        return "stdlib" if path.startswith("<frozen") else "user"
    p = _norm(path)
    if any(p.startswith(r) for r in roots):
        return "torch"
    if p.startswith(_NSTVIZ_DIR):
        return "user" if p.startswith(_EXAMPLES_DIR) else "nstviz"
    parts = p.split("/")
    low = [x.lower() for x in parts]
    if _torch_by_shape(parts, low) is not None:
        return "torch"
    installed = max((i for i, x in enumerate(low[:-1]) if x in _INSTALL_DIRS), default=-1)
    for i in range(max(installed, 0), len(parts) - 1):
        if low[i] == "nstviz" and ((installed >= 0 and i == installed + 1) or parts[i + 1] in _NSTVIZ_PARTS):
            return "user" if parts[i + 1] == "examples" else "nstviz"
    if installed >= 0:
        return "user"  # a third-party library
    if p.startswith(_LOCAL_STDLIB):
        return "stdlib"
    windows = "\\" in path or bool(_DRIVE_RE.match(p))
    for i in range(len(parts) - 1):
        if low[i] in ("lib", "lib64") and i + 2 < len(parts) and _STDLIB_DIR_RE.match(low[i + 1]):
            return "stdlib"
        if windows and parts[i] == "Lib":
            return "stdlib"
    return "user"


def torch_root_of(path: str) -> str | None:
    """The ``.../torch/`` folder of a file whose path's shape says it is torch's, else None."""
    parts = _norm(path).split("/")
    i = _torch_by_shape(parts, [x.lower() for x in parts])
    return "/".join(parts[: i + 1]) + "/" if i is not None else None


def installed_package(path: str) -> str | None:
    """The top-level package of a file installed under ``site-packages``/``dist-packages`` (else None)."""
    parts = _norm(path).split("/")
    low = [x.lower() for x in parts]
    installed = max((i for i, x in enumerate(low[:-1]) if x in _INSTALL_DIRS), default=-1)
    return parts[installed + 1].removesuffix(".py") if installed >= 0 else None


# -- the rules in force -----------------------------------------------------------------------

_LIVE = PathRules()
_RULES: contextvars.ContextVar[PathRules | None] = contextvars.ContextVar("nstviz_path_rules", default=None)


def register_live_torch_root(root: str) -> None:
    """The running torch's folder: its files are torch's in live captures (not in logs read)."""
    _LIVE.add_torch_root(root)


def current_rules() -> PathRules:
    """The rules in force: a log's own (inside :func:`using`), else the live process's."""
    return _RULES.get() or _LIVE


@contextlib.contextmanager
def using(rules: PathRules) -> Iterator[PathRules]:
    """Classify with ``rules`` (a log's, which leave the reading machine's torch out) inside the block."""
    token = _RULES.set(rules)
    try:
        yield rules
    finally:
        _RULES.reset(token)


def classify(path: str | None, rules: PathRules | None = None) -> FileKind:
    """Whose code ``path`` is, under ``rules`` (default: :func:`current_rules`)."""
    return (rules or current_rules()).classify(path)


def is_user_file(path: str | None) -> bool:
    """True for files of user code: not torch's, nstviz's, the standard library's or frozen modules.

    Third-party libraries (transformers...) count as user code: their breaks are the user's.
    """
    return bool(path) and current_rules().classify(path) == "user"


def is_torch_file(path: str | None) -> bool:
    """True for torch's own files (see the module docstring for the rule)."""
    return bool(path) and current_rules().classify(path) == "torch"


class RootLearner:
    """Learns where a log's torch was from the log itself.

    Every record's glog prefix names the torch file that logged it, relative to its ``sys.path``
    entry (``V1201 ... 16227 site-packages/torch/_dynamo/utils.py:2350]``, or
    ``torch/_dynamo/utils.py`` from a checkout); the log's ``str`` records and stacks give full
    paths. A full path that ends with a logging site is a torch file, so its folder is that
    log's torch root, however torch was installed. A full path that is torch's by its shape
    gives its root too.
    """

    def __init__(self, rules: PathRules) -> None:
        self.rules = rules
        self._tails: dict[str, set[str]] = {}  # basename -> "torch/<tail>" of logging sites
        self._paths: dict[str, set[str]] = {}  # basename -> full paths seen
        self._sites: set[str] = set()

    def site(self, site: str) -> None:
        """A glog call site (``site-packages/torch/_dynamo/utils.py``, without ``:line``)."""
        if site in self._sites:
            return
        self._sites.add(site)
        norm = _norm(site)
        parts = norm.split("/")
        at = max((i for i, x in enumerate(parts[:-1]) if x == "torch"), default=-1)
        if at < 0:
            return
        if norm.startswith("/") or _DRIVE_RE.match(norm):
            self.rules.add_torch_root("/".join(parts[: at + 1]))  # an absolute path: the root itself
            return
        tail = "/".join(parts[at:])
        self._tails.setdefault(parts[-1], set()).add(tail)
        for full in self._paths.get(parts[-1], ()):
            self._match(full, tail)

    def path(self, full: str) -> None:
        """A full path recorded in the log (a ``str`` record, a stack frame)."""
        if not full or full.startswith("<"):
            return
        p = _norm(full)
        base = p.rsplit("/", 1)[-1]
        seen = self._paths.setdefault(base, set())
        if p in seen:
            return
        seen.add(p)
        root = torch_root_of(p)
        if root is not None:
            self.rules.add_torch_root(root)
        for tail in self._tails.get(base, ()):
            self._match(p, tail)

    def _match(self, full: str, tail: str) -> None:
        if full.endswith("/" + tail):
            self.rules.add_torch_root(full[: len(full) - len(tail)] + "torch")


# -- user stacks --------------------------------------------------------------------------------

_FRAME_RE = re.compile(r'^\s*File "(?P<file>.+)", line (?P<line>\d+), in (?P<function>.+)$')


class StackTable:
    """Interned user stacks (tuples of :class:`Location`, outermost first)."""

    def __init__(self) -> None:
        self.stacks: list[tuple[Location, ...]] = []
        self._index: dict[tuple[Location, ...], int] = {}
        self._parsed: dict[str, int | None] = {}

    def intern(self, stack: Sequence[Location]) -> int | None:
        """Index of ``stack`` in :attr:`stacks` (adding it), or None for an empty stack."""
        key = tuple(stack)
        if not key:
            return None
        idx = self._index.get(key)
        if idx is None:
            idx = self._index[key] = len(self.stacks)
            self.stacks.append(key)
        return idx

    def intern_text(self, stack_trace: str | None) -> int | None:
        """Intern the user frames of an FX ``stack_trace`` string (cached per string)."""
        if not stack_trace:
            return None
        if stack_trace in self._parsed:
            return self._parsed[stack_trace]
        idx = self.intern(parse_frames(stack_trace.splitlines()))
        self._parsed[stack_trace] = idx
        return idx


def parse_frames(lines: Iterable[str], *, user_only: bool = True) -> list[Location]:
    """Parse ``File "...", line N, in fn`` lines (and the code line after each)."""
    out: list[Location] = []
    pending: dict[str, Any] | None = None
    for raw in lines:
        m = _FRAME_RE.match(raw)
        if m:
            if pending is not None:
                out.append(Location(**pending))
            pending = {"file": m["file"], "line": int(m["line"]), "function": m["function"].strip(), "code": None}
            continue
        if pending is not None and pending["code"] is None:
            text = raw.strip()
            if text and not set(text) <= set("^~ "):
                pending["code"] = text
    if pending is not None:
        out.append(Location(**pending))
    if user_only:
        out = [loc for loc in out if is_user_file(loc.file)]
    return [with_code(loc) for loc in out]


def with_code(loc: Location) -> Location:
    """``loc`` with its source line filled in from :mod:`linecache` when it has none."""
    if loc.code is not None:
        return loc
    text = linecache.getline(loc.file, loc.line).strip()
    return Location(file=loc.file, line=loc.line, function=loc.function, code=text or None)


def location_from_frame(frame: Any) -> Location:
    """A :class:`Location` from a ``traceback.FrameSummary``."""
    return with_code(
        Location(file=frame.filename, line=int(frame.lineno or 0), function=frame.name, code=(frame.line or None))
    )


# -- sources --------------------------------------------------------------------------------------


def read_source(path: str) -> SourceFile | None:
    """Text of a user file or IPython cell (via :mod:`linecache`), capped in size."""
    lines = linecache.getlines(path)
    if not lines:
        return None
    text = "".join(lines)
    truncated = len(text) > MAX_SOURCE_BYTES
    return SourceFile(path=path, text=text[:MAX_SOURCE_BYTES], truncated=truncated)


def read_sources(paths: Iterable[str]) -> dict[str, SourceFile]:
    """Text of each readable user file in ``paths`` (first mention first), within the Report's budget."""
    out: dict[str, SourceFile] = {}
    budget = MAX_TOTAL_SOURCE_CHARS
    for path in dict.fromkeys(paths):
        if not is_user_file(path):
            continue
        src = read_source(path)
        if src is None:
            continue
        if len(src.text) > budget:
            src = SourceFile(path=src.path, text=src.text[: max(budget, 0)], truncated=True)
        budget -= len(src.text)
        out[path] = src
    return out


__all__ = [
    "MAX_SOURCE_BYTES",
    "MAX_TOTAL_SOURCE_CHARS",
    "FileKind",
    "PathRules",
    "RootLearner",
    "StackTable",
    "classify",
    "current_rules",
    "installed_package",
    "is_torch_file",
    "is_user_file",
    "location_from_frame",
    "parse_frames",
    "read_source",
    "read_sources",
    "register_live_torch_root",
    "torch_root_of",
    "using",
    "with_code",
]
