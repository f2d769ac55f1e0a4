"""Roll a user namespace back to a checkpoint, so every run starts from the same state.

nstviz runs the user's code several times (baseline, nonstrict, advisor attempts). A training
cell changes state as it runs: it rebinds names, adds new ones, updates parameters in place,
fills ``.grad``, advances optimizer and LR-scheduler state. :class:`NamespaceCheckpoint` is
taken before a run; :meth:`~NamespaceCheckpoint.restore` brings the namespace back, so the next
run starts from exactly the same state and the runs' outputs can be compared.

What is restored:

- **bindings**: names the run added are removed, rebound names point at their old objects
  again (the namespace dict itself is kept: functions defined earlier hold it as globals).
  Names starting with ``__`` are left alone: Dynamo installs the globals its compiled code
  needs there (``__compiled_fn_1``, ``__resume_at_...``, ``__builtins_dict___0``) and removes
  them itself when the code is freed. In an IPython namespace, IPython's own names (``In``,
  ``Out``, ``_``, ``_i3``, ``_5``...) are left alone too;
- **tensors** reachable from the namespace (directly, in lists/tuples/dicts/sets, in
  attributes of plain objects, in ``nn.Module`` s, optimizers and schedulers): their data is
  restored *in place*, storage by storage, so every view, alias and shared parameter comes
  back at once and identity is preserved (compiled code and closures keep referencing the same
  objects). Size/stride/offset changes (``resize_``, ``set_``, ``t_``) are undone too;
- **nn.Module**: parameters, buffers and submodules (entries of ``_parameters``, ``_buffers``,
  ``_modules``), hooks registered on it, each parameter's ``.grad`` (``None`` again if it was
  ``None``), and the module's other attributes (``training``, counters...) as bindings;
- **torch.optim.Optimizer**: ``state`` (moments, step counts, entries added by the run
  removed) and ``param_groups`` (learning rates...), in place;
- **LR schedulers** and other objects with a ``state_dict`` from ``torch.optim``
  (``last_epoch``, ``_step_count``, ``_last_lr``...): their attributes as bindings;
- **top-level lists, dicts and sets** bound in the namespace: their items (one level deep,
  e.g. a ``losses`` list that the cell appends to).

Memory: one copy of each distinct tensor storage that holds model state (parameters,
buffers, gradients, optimizer state, anything that requires grad): about 1x the model,
gradient and optimizer state; views, aliases and shared parameters are copied once. Other
(data) tensors are copied too while they fit in ``max_data_bytes`` (512 MiB by default); a
bigger dataset tensor is not duplicated: its version counter is recorded instead, and a run
that changes it in place is listed in :attr:`NamespaceCheckpoint.unrestored` rather than
undone. Copies are single-threaded memcpys. Nothing else is deep-copied.

Limits (not rolled back):

- arbitrary Python objects mutated in place (attributes of your own classes are walked only
  to find tensors, modules and optimizers in them; their other attributes are not restored);
  containers nested deeper than the namespace's top level;
- state outside the namespace: module globals of imported modules, files written, network
  or database effects, printed output, caches of other libraries;
- RNG states (the runner seeds torch, random and numpy itself before each run);
- tensors without data (meta, fake), sparse tensors and tensor subclasses (left as they
  are, listed in :attr:`NamespaceCheckpoint.skipped`); tensors only reachable through
  closures of functions or through more than 6 levels of objects; containers of more than
  100,000 items are not scanned;
- a mutation made through ``tensor.data`` (which bypasses the version counter) of a data
  tensor that was not copied goes unreported.

A KeyboardInterrupt that arrives during :meth:`~NamespaceCheckpoint.restore` is held until
the restore has finished.
"""

from __future__ import annotations

import ctypes
import re
import types
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import torch

__all__ = ["NamespaceCheckpoint"]

_IPYTHON_NAMES = frozenset(
    {"In", "Out", "_oh", "_ih", "_dh", "_", "__", "___", "_i", "_ii", "_iii", "exit", "quit", "get_ipython"}
)
_IPYTHON_HISTORY = re.compile(r"_i?\d+\Z")
_MAX_DEPTH = 6
_MAX_OBJECTS = 200_000
_MAX_ITEMS = 100_000
DEFAULT_MAX_DATA_BYTES = 512 * 2**20
"""Budget for copying *data* tensors (not parameters, buffers, gradients, optimizer state or
anything that requires grad, which are always copied): a 2 GB dataset tensor in the namespace
is not duplicated; a run that changes it in place is reported in ``unrestored``."""


@dataclass
class _TensorMeta:
    tensor: torch.Tensor
    storage: torch.UntypedStorage
    offset: int
    size: tuple[int, ...]
    stride: tuple[int, ...]
    requires_grad: bool
    grad: torch.Tensor | None
    has_grad_slot: bool
    where: str = ""
    copied: bool = True
    version: int = 0


@dataclass
class _Saved:
    bindings: dict[str, Any]
    storages: dict[int, tuple[torch.UntypedStorage, Any, int]] = field(default_factory=dict)
    """key -> (the live storage, its copy, its size in bytes then)."""
    tensors: list[_TensorMeta] = field(default_factory=list)
    attr_dicts: list[tuple[dict, dict]] = field(default_factory=list)
    """(live ``__dict__`` or registry dict, shallow copy): entries restored as bindings."""
    module_dicts: list[tuple[dict, dict]] = field(default_factory=list)
    """The same for ``nn.Module`` s (their ``__dict__``, registries and hook dicts)."""
    kept: list[tuple[dict, dict, Any]] = field(default_factory=list)
    """(live dict, its copy, key): module entries a warm-up run added, kept by :meth:`restore`."""
    containers: list[tuple[Any, Any]] = field(default_factory=list)
    optimizers: list[tuple[torch.optim.Optimizer, dict, list]] = field(default_factory=list)


class NamespaceCheckpoint:
    """A checkpoint of a namespace dict, to restore after a run.

    Args:
        namespace: the dict the user's code runs in (an IPython ``user_ns`` or globals).

    Example::

        cp = NamespaceCheckpoint(ns)
        try:
            exec(code, ns)          # run 1
        finally:
            cp.restore()            # ns is as before run 1
        exec(code, ns)              # run 2 starts from the same state
        cp.discard()
    """

    def __init__(self, namespace: dict[str, Any], *, max_data_bytes: int = DEFAULT_MAX_DATA_BYTES) -> None:
        if not isinstance(namespace, dict):
            raise TypeError(f"NamespaceCheckpoint needs the namespace dict, got {type(namespace).__name__}")
        self._namespace = namespace
        self._ipython = "_ih" in namespace or "get_ipython" in namespace
        self._max_data_bytes = max_data_bytes
        self.skipped: list[str] = []
        """Values that were found but cannot be checkpointed (name and why)."""
        self.unrestored: list[str] = []
        """Tensors a run changed in place that could not be restored (filled by :meth:`restore`)."""
        self._saved: _Saved | None = _Saved(bindings=dict(namespace))
        self._seen: set[int] = set()
        self._found: dict[int, list[Any]] = {}
        self._count = 0
        with torch.no_grad():
            for name, value in list(namespace.items()):
                if name.startswith("__") or (self._ipython and _is_ipython_name(name)):
                    continue
                self._top_level_container(value)
                self._visit(value, name, 0)
            self._save_tensors()
        self._seen = set()
        self._found = {}

    # -- public ----------------------------------------------------------------------------

    @property
    def nbytes(self) -> int:
        """Bytes of tensor data held by this checkpoint."""
        if self._saved is None:
            return 0
        return sum(_copy_nbytes(copy) for _, copy, _ in self._saved.storages.values() if copy is not None)

    def restore(self, *, keep_added: bool = True) -> None:
        """Bring the namespace and the objects reachable from it back to the checkpoint.

        ``keep_added=False`` also takes away what :meth:`keep_module_additions` kept (then
        :meth:`drop_kept`): the state from before the warm-up.

        Can be called several times (each time restores the same state) until
        :meth:`discard`. A KeyboardInterrupt during the restore does not leave the namespace
        half restored: the restore is finished (it is idempotent, so it starts over), then the
        interrupt is raised.

        Raises:
            RuntimeError: the checkpoint was discarded.
            KeyboardInterrupt: an interrupt arrived during the restore (after it completed).
        """
        saved = self._saved
        if saved is None:
            raise RuntimeError("this NamespaceCheckpoint was discarded; take a new one before the run")
        interrupt: KeyboardInterrupt | None = None
        for _ in range(5):
            try:
                self._restore(saved)
                break
            except KeyboardInterrupt as exc:
                interrupt = exc
        if not keep_added:
            self.drop_kept()
        if interrupt is not None:
            raise interrupt

    def _restore(self, saved: _Saved) -> None:
        ns = self._namespace
        for name in [n for n in ns if n not in saved.bindings and not _left_alone(n, self._ipython)]:
            del ns[name]
        for name, value in saved.bindings.items():
            if not _left_alone(name, self._ipython) and ns.get(name, _MISSING) is not value:
                ns[name] = value
        for live, copy in (*saved.attr_dicts, *saved.module_dicts):
            _restore_dict(live, copy)
        for live, copy in saved.containers:
            _restore_container(live, copy)
        for opt, state, groups in saved.optimizers:
            _restore_optimizer(opt, state, groups)
        with torch.no_grad():
            for storage, copy, nbytes in saved.storages.values():
                if copy is None:
                    continue
                if storage.nbytes() != nbytes:
                    storage.resize_(nbytes)
                _copy_into(storage, copy)
            for meta in saved.tensors:
                if meta.copied:
                    _restore_tensor(meta)
                elif _changed(meta):
                    note = (
                        f"{meta.where}: changed in place by the run but not restored: it is data, not model "
                        f"state, and larger than the {self._max_data_bytes / 2**20:.0f} MiB checkpoint "
                        "budget for data tensors, so the next run sees the changed values"
                    )
                    if note not in self.unrestored:
                        self.unrestored.append(note)

    def keep_module_additions(self) -> int:
        """Keep, from now on, what the run since the checkpoint added to modules: the steady state.

        Code that initialises itself on its first call (transformers installs its
        output-capturing hooks and sets a flag on the model then) would otherwise start every run
        from before that call, so every run would be a first call, which a training loop is past
        after one step. Called after a warm-up run of a callable (``compare``), this adopts the
        module attributes, registry entries and hooks that run *added* (changed ones are still
        restored) into the checkpoint; :meth:`drop_kept` takes them away again. Returns how many
        entries were kept.
        """
        saved = self._saved
        if saved is None:
            raise RuntimeError("this NamespaceCheckpoint was discarded; take a new one before the run")
        for live, copy in saved.module_dicts:
            for key in [k for k in live if k not in copy]:
                copy[key] = live[key]
                saved.kept.append((live, copy, key))
        return len(saved.kept)

    def drop_kept(self) -> None:
        """Take away what :meth:`keep_module_additions` kept (the modules as before the warm-up)."""
        saved = self._saved
        if saved is None:
            return
        for live, copy, key in saved.kept:
            value = copy.pop(key, _MISSING)
            if value is not _MISSING and live.get(key, _MISSING) is value:
                del live[key]
        saved.kept.clear()

    def discard(self) -> None:
        """Free the saved copies. The checkpoint cannot be restored afterwards."""
        self._saved = None

    def __enter__(self) -> NamespaceCheckpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()

    # -- walking ---------------------------------------------------------------------------

    def _top_level_container(self, value: Any) -> None:
        assert self._saved is not None
        if type(value) is list:
            self._saved.containers.append((value, list(value)))
        elif type(value) is dict:
            self._saved.containers.append((value, dict(value)))
        elif type(value) is set:
            self._saved.containers.append((value, set(value)))

    def _visit(self, value: Any, where: str, depth: int, state: bool = False) -> None:
        if value is None or isinstance(
            value, (bool, int, float, complex, str, bytes, type, types.ModuleType)
        ):
            return
        if isinstance(value, torch.Tensor):
            self._note_tensor(value, where, state)
            return
        key = id(value)
        if key in self._seen:
            return
        self._seen.add(key)
        self._count += 1
        if self._count > _MAX_OBJECTS:
            if self._count == _MAX_OBJECTS + 1:
                self.skipped.append(
                    f"{where}: more than {_MAX_OBJECTS} objects reachable; the rest is not checkpointed"
                )
            return
        if isinstance(value, torch.nn.Module):
            self._module(value, where, depth)
        elif isinstance(value, torch.optim.Optimizer):
            self._optimizer(value, where, depth)
        elif depth >= _MAX_DEPTH or isinstance(
            value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)
        ):
            return
        elif isinstance(value, (list, tuple, set, frozenset, dict)) and len(value) > _MAX_ITEMS:
            self.skipped.append(
                f"{where}: a {type(value).__name__} of {len(value)} items is not scanned for tensors"
            )
        elif isinstance(value, (list, tuple, set, frozenset)):
            for i, item in enumerate(value):
                self._visit(item, f"{where}[{i}]", depth + 1)
        elif isinstance(value, dict):
            for k, item in value.items():
                self._visit(item, f"{where}[{k!r}]", depth + 1)
        elif _is_scheduler(value):
            self._plain_state(value, where, depth)
        else:
            attrs = getattr(value, "__dict__", None)
            if isinstance(attrs, dict):
                for k, item in attrs.items():
                    self._visit(item, f"{where}.{k}", depth + 1)

    def _note_tensor(self, t: torch.Tensor, where: str, state: bool) -> None:
        """Record a tensor found at ``where``; ``state`` when it is model/optimizer state."""
        entry = self._found.get(id(t))
        if entry is not None:
            entry[2] = entry[2] or state
            return
        state = state or isinstance(t, torch.nn.Parameter) or t.requires_grad
        self._found[id(t)] = [t, where, state]
        grad = t.grad if t.is_leaf else None
        if grad is not None:
            self._note_tensor(grad, f"{where}.grad", True)

    def _save_tensors(self) -> None:
        """Copy the storages of the tensors found: all model state, data within the budget."""
        assert self._saved is not None
        usable: list[tuple[torch.Tensor, str, bool, int, torch.UntypedStorage]] = []
        state_keys: set[int] = set()
        for t, where, state in self._found.values():
            try:
                if type(t) not in (torch.Tensor, torch.nn.Parameter, torch.nn.Buffer):
                    self.skipped.append(f"{where}: tensor subclass {type(t).__name__} is not checkpointed")
                    continue
                if t.is_sparse or t.device.type == "meta":
                    self.skipped.append(f"{where}: {t.layout} tensor on {t.device} is not checkpointed")
                    continue
                storage = t.untyped_storage()
            except Exception as exc:  # fake / functional tensors without storage
                self.skipped.append(f"{where}: {type(exc).__name__}: {exc}")
                continue
            key = _storage_key(storage)
            usable.append((t, where, state, key, storage))
            if state:
                state_keys.add(key)
        data_bytes = 0
        for t, where, _state, key, storage in usable:
            if key not in self._saved.storages:
                nbytes = storage.nbytes()
                copy = None
                if nbytes and key in state_keys:
                    copy = _copy_of(storage)
                elif nbytes and data_bytes + nbytes <= self._max_data_bytes:
                    copy = _copy_of(storage)
                    data_bytes += nbytes
                elif nbytes:
                    self.skipped.append(
                        f"{where}: {nbytes / 2**20:.0f} MiB of data beyond the checkpoint budget for data "
                        "tensors: not copied; a run that changes it in place is reported, not undone"
                    )
                self._saved.storages[key] = (storage, copy, nbytes)
            storage, copy, nbytes = self._saved.storages[key]
            self._saved.tensors.append(
                _TensorMeta(
                    tensor=t,
                    storage=storage,
                    offset=t.storage_offset(),
                    size=tuple(t.shape),
                    stride=tuple(t.stride()),
                    requires_grad=t.requires_grad,
                    grad=t.grad if t.is_leaf else None,
                    has_grad_slot=t.is_leaf,
                    where=where,
                    copied=copy is not None or nbytes == 0,
                    version=_version(t),
                )
            )

    def _module(self, module: torch.nn.Module, where: str, depth: int) -> None:
        assert self._saved is not None
        for name, sub in module.named_modules(remove_duplicate=True):
            if sub is not module and id(sub) in self._seen:
                continue
            self._seen.add(id(sub))
            label = f"{where}.{name}" if name else where
            self._saved.module_dicts.append((sub.__dict__, dict(sub.__dict__)))
            # Registries (parameters, buffers, submodules) and hook dicts: a cell that registers
            # a hook must not end up with one hook per run.
            for value in sub.__dict__.values():
                if isinstance(value, dict):
                    self._saved.module_dicts.append((value, dict(value)))
            for pname, p in list(sub._parameters.items()) + list(sub._buffers.items()):
                if p is not None:
                    self._visit(p, f"{label}.{pname}", depth + 1, state=True)
            for k, item in sub.__dict__.items():
                if isinstance(item, torch.Tensor):  # a plain tensor attribute: module state too
                    self._visit(item, f"{label}.{k}", depth + 1, state=True)
                elif not k.startswith("_") and not isinstance(item, torch.nn.Module):
                    self._visit(item, f"{label}.{k}", depth + 1)

    def _optimizer(self, opt: torch.optim.Optimizer, where: str, depth: int) -> None:
        assert self._saved is not None
        state = {p: dict(s) for p, s in opt.state.items()}
        groups = [(g, dict(g), list(g.get("params", ()))) for g in opt.param_groups]
        self._saved.optimizers.append((opt, state, groups))
        self._saved.attr_dicts.append((opt.__dict__, dict(opt.__dict__)))
        self._saved.containers.append((opt.param_groups, list(opt.param_groups)))
        for i, g in enumerate(opt.param_groups):
            for j, p in enumerate(g.get("params", ())):
                self._visit(p, f"{where}.param_groups[{i}].params[{j}]", depth + 1)
        for s in opt.state.values():
            for k, v in s.items():
                self._visit(v, f"{where}.state[{k!r}]", depth + 1, state=True)

    def _plain_state(self, obj: Any, where: str, depth: int) -> None:
        assert self._saved is not None
        attrs = obj.__dict__
        copy = {
            k: (list(v) if type(v) is list else dict(v) if type(v) is dict else v) for k, v in attrs.items()
        }
        self._saved.attr_dicts.append((attrs, copy))
        for k, v in attrs.items():
            if not isinstance(v, torch.optim.Optimizer):
                self._visit(v, f"{where}.{k}", depth + 1)


_MISSING = object()


def _is_ipython_name(name: str) -> bool:
    return name in _IPYTHON_NAMES or bool(_IPYTHON_HISTORY.match(name))


def _left_alone(name: str, ipython: bool) -> bool:
    """Names restore() never touches: Dynamo's ``__`` globals and, in IPython, its history names."""
    return name.startswith("__") or (ipython and _is_ipython_name(name))


def _is_scheduler(value: Any) -> bool:
    module = type(value).__module__ or ""
    return module.startswith("torch.optim") and hasattr(value, "state_dict") and hasattr(value, "__dict__")


def _storage_key(storage: torch.UntypedStorage) -> int:
    # Distinct live storages have distinct data pointers when they hold data; empty ones are
    # keyed by their C++ object so that each is tracked (resize_ could give them data).
    ptr = storage.data_ptr()
    return ptr if ptr else -storage._cdata


# Copies of CPU storages are plain single-threaded memcpys (ctypes.memmove into/from a numpy
# buffer). torch's own storage copy runs an OpenMP parallel region per call, which costs
# milliseconds per storage on a busy machine (measured: 400 storages of 256 KiB, 4.4 s with
# torch vs 0.15 s this way, load 10 on 2 cores), and a model has hundreds of small storages.
# The raw pointer is used rather than Tensor.numpy(), which would make the user's storage
# non-resizable for good.


def _copy_of(storage: torch.UntypedStorage) -> Any:
    if storage.device.type == "cpu" and _np is not None:
        out = _np.empty(storage.nbytes(), dtype=_np.uint8)
        ctypes.memmove(out.ctypes.data, storage.data_ptr(), out.nbytes)
        return out
    return storage.clone()


def _copy_into(storage: torch.UntypedStorage, copy: Any) -> None:
    if _np is not None and isinstance(copy, _np.ndarray):
        ctypes.memmove(storage.data_ptr(), copy.ctypes.data, copy.nbytes)
    else:
        storage.copy_(copy)


def _copy_nbytes(copy: Any) -> int:
    return int(copy.nbytes) if _np is not None and isinstance(copy, _np.ndarray) else copy.nbytes()


try:
    import numpy as _np
except ImportError:  # pragma: no cover - numpy comes with the test environment, not with torch
    _np = None


def _restore_dict(live: dict, copy: dict) -> None:
    for k in [k for k in live if k not in copy]:
        del live[k]
    for k, v in copy.items():
        if live.get(k, _MISSING) is not v:
            live[k] = v


def _restore_container(live: Any, copy: Any) -> None:
    if isinstance(live, dict):
        _restore_dict(live, copy)
    elif isinstance(live, list):
        if len(live) != len(copy) or any(a is not b for a, b in zip(live, copy, strict=False)):
            live[:] = copy
    elif isinstance(live, set) and live != copy:
        live.clear()
        live.update(copy)


def _restore_optimizer(
    opt: torch.optim.Optimizer, state: dict, groups: Iterable[tuple[dict, dict, list]]
) -> None:
    for p in [p for p in opt.state if p not in state]:
        del opt.state[p]
    for p, s in state.items():
        live = opt.state.get(p)
        if live is None:
            opt.state[p] = dict(s)
        else:
            _restore_dict(live, s)
    for live, copy, params in groups:
        _restore_dict(live, copy)
        if "params" in live and isinstance(live["params"], list):
            _restore_container(live["params"], params)


def _version(t: torch.Tensor) -> int:
    """The version counter (bumped by in-place ops); -1 for inference tensors, which have none."""
    try:
        return t._version
    except RuntimeError:
        return -1


def _changed(meta: _TensorMeta) -> bool:
    t = meta.tensor
    return (
        _version(t) != meta.version
        or t.storage_offset() != meta.offset
        or tuple(t.shape) != meta.size
        or tuple(t.stride()) != meta.stride
    )


def _restore_tensor(meta: _TensorMeta) -> None:
    t = meta.tensor
    if (
        t.untyped_storage().data_ptr() != meta.storage.data_ptr()
        or t.storage_offset() != meta.offset
        or tuple(t.shape) != meta.size
        or tuple(t.stride()) != meta.stride
    ):
        t.set_(meta.storage, meta.offset, meta.size, meta.stride)
    if t.requires_grad != meta.requires_grad and t.is_leaf:
        t.requires_grad_(meta.requires_grad)
    if meta.has_grad_slot and t.is_leaf and t.grad is not meta.grad:
        t.grad = meta.grad
