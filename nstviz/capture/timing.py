"""Measure what a compiled call costs: graphs, compile time, steady-state time, eager alongside.

:func:`time_compiled` times one call ``fn(*args, **kwargs)``; :func:`time_calls` times a
sequence of calls made by compiled objects earlier (what a cell did: the magic's ``--time``),
as one unit; :func:`observing_compiled_calls` notes those calls while the cell runs. The
timings are :class:`~nstviz.report.timing.RunTiming` s.

How one measurement goes:

1. **A fresh compile, isolated.** The function (a ``torch.compile`` wrapper is unwrapped to
   what it wraps) is compiled again with ``torch.compile(..., isolate_recompiles=True)`` and a
   new counting backend around the real one. The new backend makes Dynamo compile every frame
   anew (its cache entries are checked against the backend that made them); the isolated
   region keeps these compiles off the recompile budget of everything else. Dynamo is **not**
   reset: code compiled before the measurement keeps its compiled code and runs after it
   without recompiling. The measurement's own cache entries stay on the code objects until
   they die or ``torch._dynamo.reset()`` runs (``compare()`` resets at its end anyway).
   What differs from a new process: modules torch imports on a first compile are imported
   already (inductor is imported before the clock starts, so the first measurement of a
   process does not pay for it), and Dynamo's decisions to skip a frame for good are shared.
2. **The first call** is timed (trace + compile + run: the cold start); Dynamo's own compile
   time is read from its compilation metrics (``torch._dynamo.utils.get_compilation_metrics``,
   the frames' ``entire_frame_compile_time_s``); the counting backend counts the graphs.
3. **Warm-up**: ``warmup`` more calls, compiled and eager, not measured.
4. **Steady state**: rounds of one compiled and one eager call, in alternating order, so that
   the machine's load falls on both alike; each call timed with ``time.perf_counter`` (after
   ``torch.cuda.synchronize()`` when CUDA is initialised). Exactly ``calls`` rounds, or, by
   default, rounds until ``budget_s`` has passed (at least ``min_calls``, at most ``max_calls``).
   Python's garbage collector is off meanwhile (as in ``timeit``). The measurement runs with
   torch's thread settings as they are: on a machine whose cores are busy, intra-op threads
   make a per-call time jump by scheduler quanta (the spread shows it).
   The eager call runs the unwrapped function under ``torch.compiler.set_stance("force_eager")``,
   so compiled pieces inside it run eagerly too.

Everything the measurement changes is put back in ``finally`` (also when the user's function
raises, which propagates unchanged): ``torch._dynamo.config``, the non-strict marks, the RNG
states (the measured calls draw from them), ``sys.stdout``/``stderr`` (what the calls print
is dropped: they run dozens of times) and what
:class:`~nstviz.capture.state.StateSnapshot` covers, and the size of Dynamo's
compilation-metrics buffer (raised for the first call, so that a model with many frames loses
none of its compile times).
"""

from __future__ import annotations

import contextlib
import gc
import io
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from nstviz.capture import _torch_compat, state
from nstviz.capture.observed_calls import CompiledCall, observing_compiled_calls
from nstviz.errors import UsageError
from nstviz.report.timing import CallTiming, RunTiming

DEFAULT_WARMUP = 2
DEFAULT_BUDGET_S = 1.0
DEFAULT_MIN_CALLS = 5
DEFAULT_MAX_CALLS = 100

ObservedCall = tuple[Callable[..., Any], Sequence[Any], Mapping[str, Any]]
"""``(compiled function or module, args, kwargs)``: one call a cell made, captured earlier
(or a :class:`CompiledCall` from :func:`observing_compiled_calls`)."""


class _CountingBackend:
    """A Dynamo backend that counts the graphs it is given and hands them to ``inner``.

    A new instance per measurement: Dynamo matches cache entries to the backend that built
    them, so a new backend compiles every frame afresh.
    """

    def __init__(self, inner: Callable[..., Any], name: str) -> None:
        self.inner = inner
        self.graphs = 0
        self.__name__ = f"nstviz_timing_{name}"
        self.compiler_name = getattr(inner, "compiler_name", name)

    def __call__(self, gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        self.graphs += 1
        return self.inner(gm, example_inputs, **kwargs)

    def get_compiler_config(self) -> Any:
        """The wrapped backend's compiler config (Dynamo asks for it; inductor has one)."""
        get = getattr(self.inner, "get_compiler_config", None)
        return get() if callable(get) else None


@dataclass(frozen=True, slots=True)
class _Settings:
    """How one compiled object compiles: its backend (a callable Dynamo accepts) and flags."""

    backend: Any
    name: str
    fullgraph: bool
    dynamic: bool | None


def _backend_name(backend: Any) -> str:
    if isinstance(backend, str):
        return backend
    name = getattr(backend, "compiler_name", None) or getattr(backend, "__name__", None)
    return str(name or type(backend).__name__)


def _inner_backend(backend: Any, mode: str | None, options: dict[str, Any] | None, dynamic: bool | None) -> Any:
    """The compiler function ``torch.compile(backend=..., mode=..., options=...)`` would use."""
    if mode is not None or options is not None:
        if backend != "inductor":
            raise UsageError(f"mode= and options= apply to the inductor backend only, not to backend={backend!r}")
        wrapper = getattr(torch, "_TorchCompileInductorWrapper", None)
        if wrapper is None:  # pragma: no cover - every torch nstviz supports has it
            raise UsageError("this torch cannot combine mode=/options= with a timing backend; drop them")
        return wrapper(mode, options, dynamic)
    if isinstance(backend, str):
        return _torch_compat.lookup_backend(backend)
    if not callable(backend):
        raise UsageError(f"backend= must be a backend name or a callable, got {type(backend).__name__}")
    return backend


def _compile_context(obj: Any) -> Any:
    """The ``OptimizeContext`` of a ``torch.compile`` wrapper (function or module), or None."""
    ctx = getattr(obj, "dynamo_ctx", None)
    if ctx is not None:
        return ctx
    fn = getattr(obj, "__func__", obj)
    code = getattr(fn, "__code__", None)
    if code is None or not fn.__closure__:
        return None
    cells = dict(zip(code.co_freevars, fn.__closure__, strict=False))
    cell = cells.get("self")
    try:
        return cell.cell_contents if cell is not None else None
    except ValueError:
        return None


def settings_of(compiled: Any, *, default_backend: Any = "inductor") -> _Settings:
    """The backend, ``fullgraph`` and ``dynamic`` a ``torch.compile`` wrapper was made with.

    Read from the wrapper's Dynamo context (the innermost ``_torchdynamo_orig_backend``); when
    this torch keeps them elsewhere, ``default_backend`` with ``fullgraph=False``.
    """
    return _settings_of_context(_compile_context(compiled), default_backend)


def _settings_of_context(ctx: Any, default_backend: Any) -> _Settings:
    backend: Any = None
    if ctx is not None:
        obj = getattr(ctx, "callback", None)
        for _ in range(8):
            inner = getattr(obj, "_torchdynamo_orig_backend", None)
            if inner is None or inner is obj:
                break
            obj = inner
        if obj is not None and obj is not getattr(ctx, "callback", None) and callable(obj):
            backend = obj
    if backend is None:
        inner = _inner_backend(default_backend, None, None, None)
        return _Settings(inner, _backend_name(default_backend), False, None)
    return _Settings(
        backend,
        _backend_name(backend),
        bool(getattr(ctx, "fullgraph", False)),
        getattr(ctx, "_dynamic", None),
    )


def _supports_isolation() -> bool:
    import inspect

    try:
        return "isolate_recompiles" in inspect.signature(torch.compile).parameters
    except (TypeError, ValueError):  # pragma: no cover
        return False


def _recompiled(original: Any, settings: _Settings, counter: _CountingBackend) -> Any:
    kwargs: dict[str, Any] = {"backend": counter, "fullgraph": settings.fullgraph, "dynamic": settings.dynamic}
    if _supports_isolation():
        kwargs["isolate_recompiles"] = True
    return torch.compile(_torch_compat.wrapped_if_marked(original), **kwargs)


def _sync() -> None:
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def _compile_seconds(before: list[Any], after: list[Any]) -> float | None:
    """Dynamo's compile time of the frames compiled between two :func:`_metrics` snapshots."""
    seen = {id(m) for m in before}
    new = [m for m in after if id(m) not in seen]
    if not new and not after:
        return None  # this torch records none
    total = 0.0
    for m in new:
        value = getattr(m, "entire_frame_compile_time_s", None)
        if value is None:
            us = getattr(m, "dynamo_cumulative_compile_time_us", None)
            value = us / 1e6 if isinstance(us, (int, float)) else None
        if isinstance(value, (int, float)):
            total += float(value)
    return total


class _Discard(io.TextIOBase):
    """A text stream that drops what is written to it."""

    def writable(self) -> bool:
        """Always writable."""
        return True

    def write(self, text: str) -> int:
        """Drop ``text``; report it written."""
        return len(text)


def _run_all(calls: Sequence[tuple[Callable[..., Any], Sequence[Any], Mapping[str, Any]]]) -> None:
    for fn, args, kwargs in calls:
        fn(*args, **kwargs)
    _sync()


def _eager_runner(eager_calls: Sequence[ObservedCall] | None) -> Callable[[], None] | None:
    """A function that runs ``eager_calls`` once under ``force_eager`` (None without them)."""
    if eager_calls is None:
        return None

    def run_eager() -> None:
        with _eager_stance():
            _run_all(eager_calls)

    return run_eager


@contextlib.contextmanager
def _eager_stance() -> Iterator[None]:
    set_stance = getattr(torch.compiler, "set_stance", None)
    if set_stance is None:  # pragma: no cover - torch < 2.6
        yield
        return
    with set_stance("force_eager"):
        yield


def _prepare_backend(settings: Sequence[_Settings]) -> None:
    """Import inductor before the clock starts: its first import costs seconds, once per process."""
    if any(s.name == "inductor" or "Inductor" in type(s.backend).__name__ for s in settings):
        _torch_compat.import_inductor()


@dataclass(frozen=True, slots=True)
class Sampling:
    """How many calls a measurement makes: ``warmup`` unmeasured, then the measured rounds.

    Exactly ``calls`` rounds, or (``calls`` None) rounds until ``budget_s`` has passed, at least
    ``min_calls`` and at most ``max_calls`` (``budget_s`` None: ``max_calls`` rounds).
    """

    warmup: int = DEFAULT_WARMUP
    calls: int | None = None
    budget_s: float | None = DEFAULT_BUDGET_S
    min_calls: int = DEFAULT_MIN_CALLS
    max_calls: int = DEFAULT_MAX_CALLS

    def checked(self) -> Sampling:
        """These counts, refused with :class:`UsageError` when out of range."""
        if self.warmup < 0:
            raise UsageError(f"warmup must be >= 0, got {self.warmup}")
        if self.calls is not None and self.calls < 1:
            raise UsageError(f"calls must be >= 1 (or None for a time budget), got {self.calls}")
        if self.min_calls < 1 or self.max_calls < self.min_calls:
            raise UsageError(
                f"need 1 <= min_calls <= max_calls, got min_calls={self.min_calls}, max_calls={self.max_calls}"
            )
        if self.budget_s is not None and self.budget_s < 0:
            raise UsageError(f"budget_s must be >= 0, got {self.budget_s}")
        return self

    def call_timings(self, samples: dict[str, list[float]]) -> tuple[CallTiming, CallTiming | None]:
        """The steady compiled and (when measured) eager :class:`CallTiming` of :func:`_rounds`' samples."""
        steady = CallTiming.of(samples["compiled"], warmup=self.warmup)
        return steady, CallTiming.of(samples["eager"], warmup=self.warmup) if "eager" in samples else None


def time_calls(
    observed: Sequence[ObservedCall | CompiledCall],
    *,
    backend: Any = "as_written",
    eager: bool = True,
    warmup: int = DEFAULT_WARMUP,
    calls: int | None = None,
    budget_s: float | None = DEFAULT_BUDGET_S,
    min_calls: int = DEFAULT_MIN_CALLS,
    max_calls: int = DEFAULT_MAX_CALLS,
) -> RunTiming:
    """Time a sequence of compiled calls captured earlier, as one unit (see the module docstring).

    Each distinct compiled object is recompiled once, fresh and isolated, with its own backend
    and flags (``backend="as_written"``) or with ``backend`` (a name or a callable); one
    "call" of the result is the whole sequence, in order. Graphs are summed over the objects.

    Args:
        observed: ``(compiled function or module, args, kwargs)`` per call, in the order made,
            or the :class:`CompiledCall` s :func:`observing_compiled_calls` saw. A plain
            function or module is compiled with ``backend`` (``"inductor"`` for ``"as_written"``).
        backend: ``"as_written"``, or the backend to compile every object with.
        eager: also time the sequence eagerly, interleaved.
        warmup: sequences run after the first (compiling) one and not measured.
        calls: measure exactly this many sequences; None: as many as ``budget_s`` allows.
        budget_s: time for the measured sequences, compiled and eager together (None: no
            bound, ``max_calls`` sequences).
        min_calls: the fewest sequences measured when ``calls`` is None (even past the budget).
        max_calls: the most sequences measured when ``calls`` is None.

    Returns:
        The measurement (``steady`` and ``eager`` per sequence).

    Raises:
        UsageError: no calls, or bad counts. Whatever the user's code raises propagates,
            with the state restored.
    """
    sampling = Sampling(warmup, calls, budget_s, min_calls, max_calls).checked()
    if not observed:
        raise UsageError("time_calls needs at least one observed (function, args, kwargs) call")
    fresh = _FreshCompiles(backend)
    compiled_calls, eager_calls = fresh.calls(observed)
    names = sorted({s.name for s in fresh.settings})
    return _measure(
        compiled_calls,
        eager_calls if eager else None,
        counters=list(fresh.counters.values()),
        settings=fresh.settings,
        backend_name="+".join(names),
        sampling=sampling,
    )


class _FreshCompiles:
    """Each distinct compiled object of :func:`time_calls`, compiled afresh once (with its counter)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.counters: dict[Any, _CountingBackend] = {}
        self.recompiled: dict[Any, Any] = {}
        self.settings: list[_Settings] = []

    def calls(self, observed: Sequence[ObservedCall | CompiledCall]) -> tuple[list[ObservedCall], list[ObservedCall]]:
        """The observed calls made with their fresh compiles, and the same calls made eagerly."""
        compiled_calls: list[ObservedCall] = []
        eager_calls: list[ObservedCall] = []
        for item in observed:
            if isinstance(item, CompiledCall):
                compiled_fn, original = self.of_context(item)
                compiled_calls.append((compiled_fn, item.args, item.kwargs))
                eager_calls.append((original, item.args, item.kwargs))
                continue
            fn, args, kwargs = item
            if not callable(fn):
                raise UsageError(f"an observed call's function must be callable, got {type(fn).__name__}")
            compiled_fn, original = self.of_callable(fn)
            compiled_calls.append((compiled_fn, args, dict(kwargs)))
            eager_calls.append((original, args, dict(kwargs)))
        return compiled_calls, eager_calls

    def _given(self, name: Any) -> _Settings:
        return _Settings(_inner_backend(name, None, None, None), _backend_name(name), False, None)

    def _add(self, key: Any, original: Any, settings: _Settings) -> None:
        counter = _CountingBackend(settings.backend, settings.name)
        self.counters[key] = counter
        self.recompiled[key] = (_recompiled(original, settings, counter), original)
        self.settings.append(settings)

    def of_context(self, item: CompiledCall) -> tuple[Any, Any]:
        """(compiled afresh, eager) of a call :func:`observing_compiled_calls` saw."""
        key = (id(item.context), id(getattr(item.original, "__func__", item.original)))
        if key not in self.recompiled:
            as_written = self.backend == "as_written"
            settings = _settings_of_context(item.context, "inductor") if as_written else self._given(self.backend)
            self._add(key, item.original, settings)
        return self.recompiled[key]

    def of_callable(self, fn: Callable[..., Any]) -> tuple[Any, Any]:
        """(compiled afresh, eager) of a ``torch.compile`` wrapper, or of a plain function or module."""
        key = id(fn)
        if key not in self.recompiled:
            original = _torch_compat.compiled_original(fn) if _torch_compat.is_compiled_object(fn) else None
            if original is not None:
                as_written = self.backend == "as_written"
                settings = settings_of(fn, default_backend="inductor") if as_written else self._given(self.backend)
                if getattr(fn, "__self__", None) is not None and getattr(original, "__self__", None) is None:
                    import types

                    original = types.MethodType(original, fn.__self__)  # @torch.compile on a method
            else:
                original = fn
                settings = self._given("inductor" if self.backend == "as_written" else self.backend)
            self._add(key, original, settings)
        return self.recompiled[key]


def time_compiled(
    fn: Callable[..., Any],
    args: Sequence[Any] = (),
    kwargs: Mapping[str, Any] | None = None,
    *,
    backend: Any = "inductor",
    fullgraph: bool = False,
    dynamic: bool | None = None,
    mode: str | None = None,
    options: dict[str, Any] | None = None,
    eager: bool = True,
    warmup: int = DEFAULT_WARMUP,
    calls: int | None = None,
    budget_s: float | None = DEFAULT_BUDGET_S,
    min_calls: int = DEFAULT_MIN_CALLS,
    max_calls: int = DEFAULT_MAX_CALLS,
) -> RunTiming:
    """Compile ``fn`` afresh and time ``fn(*args, **kwargs)``: graphs, compile, steady state, eager.

    See the module docstring for how, and what is restored. ``fn`` may be a function, an
    ``nn.Module`` or a ``torch.compile`` wrapper (timed as what it wraps, compiled with the
    arguments given here, not the wrapper's own).

    Args:
        fn: what to compile and call.
        args: the call's positional arguments (the same objects every call).
        kwargs: its keyword arguments.
        backend: a backend name (``"inductor"``, ``"aot_eager"``, ``"eager"``...) or callable.
        fullgraph: as for ``torch.compile``.
        dynamic: as for ``torch.compile``.
        mode: as for ``torch.compile`` (inductor only).
        options: as for ``torch.compile`` (inductor only).
        eager: also time the call eagerly, interleaved with the compiled calls.
        warmup: calls after the first (compiling) one that are not measured.
        calls: measure exactly this many calls; None: as many as ``budget_s`` allows.
        budget_s: time for the measured calls, compiled and eager together (None: no bound,
            ``max_calls`` calls).
        min_calls: the fewest calls measured when ``calls`` is None (even past the budget).
        max_calls: the most calls measured when ``calls`` is None.

    Returns:
        The measurement.

    Raises:
        UsageError: bad arguments (before anything runs). What ``fn`` raises propagates, with
            the state restored.
    """
    sampling = Sampling(warmup, calls, budget_s, min_calls, max_calls).checked()
    if not callable(fn):
        raise UsageError(f"time_compiled needs a callable, got {type(fn).__name__}")
    original = _torch_compat.compiled_original(fn) if _torch_compat.is_compiled_object(fn) else fn
    settings = _Settings(_inner_backend(backend, mode, options, dynamic), _backend_name(backend), fullgraph, dynamic)
    counter = _CountingBackend(settings.backend, settings.name)
    compiled = _recompiled(original, settings, counter)
    call_kwargs = dict(kwargs or {})
    return _measure(
        [(compiled, args, call_kwargs)],
        [(original, args, call_kwargs)] if eager else None,
        counters=[counter],
        settings=[settings],
        backend_name=settings.name,
        sampling=sampling,
    )


def _rounds(
    run_compiled: Callable[[], None], run_eager: Callable[[], None] | None, sampling: Sampling
) -> dict[str, list[float]]:
    """Warm-up, then interleaved compiled/eager rounds (steps 3 and 4 of the module docstring)."""
    calls, budget_s, min_calls, max_calls = sampling.calls, sampling.budget_s, sampling.min_calls, sampling.max_calls
    for _ in range(sampling.warmup):
        run_compiled()
        if run_eager is not None:
            run_eager()
    pairs: list[tuple[str, Callable[[], None]]] = [("compiled", run_compiled)]
    if run_eager is not None:
        pairs.append(("eager", run_eager))
    samples: dict[str, list[float]] = {name: [] for name, _ in pairs}
    gc_was_enabled = gc.isenabled()
    gc.disable()  # as timeit does: a collection would land on whichever call is running
    try:
        began = time.perf_counter()
        rounds = 0
        while True:
            for name, run in pairs if rounds % 2 == 0 else pairs[::-1]:
                t0 = time.perf_counter()
                run()
                samples[name].append(time.perf_counter() - t0)
            rounds += 1
            if calls is not None:
                if rounds >= calls:
                    break
            elif rounds >= max_calls or (
                rounds >= min_calls and budget_s is not None and time.perf_counter() - began >= budget_s
            ):
                break
    finally:
        if gc_was_enabled:
            gc.enable()
    return samples


def _measure(
    compiled_calls: Sequence[tuple[Callable[..., Any], Sequence[Any], Mapping[str, Any]]],
    eager_calls: Sequence[tuple[Callable[..., Any], Sequence[Any], Mapping[str, Any]]] | None,
    *,
    counters: Sequence[_CountingBackend],
    settings: Sequence[_Settings],
    backend_name: str,
    sampling: Sampling,
) -> RunTiming:
    snapshot = state.StateSnapshot.take()
    started = time.perf_counter()
    hooks_before = _torch_compat.dynamo_global_hooks()
    try:
        _prepare_backend(settings)
        # the calls run dozens of times: what they print would flood the cell (restored below)
        sink = _Discard()
        sys.stdout = sys.stderr = sink

        def run_compiled() -> None:
            _run_all(compiled_calls)

        with _torch_compat.compilation_metrics_room():
            before = _torch_compat.compilation_metrics()
            start = time.perf_counter()
            run_compiled()
            first_call_s = time.perf_counter() - start
            compile_s = _compile_seconds(before, _torch_compat.compilation_metrics())
        graphs = sum(c.graphs for c in counters)
        samples = _rounds(run_compiled, _eager_runner(eager_calls), sampling)
        recompiles = sum(c.graphs for c in counters) - graphs
    finally:
        # the measurement's compiled code stays alive (cache entries): its Dynamo globals must not
        # make torch print KeyErrors at interpreter exit (see _torch_compat.quiet_dynamo_cleanups)
        _torch_compat.quiet_dynamo_cleanups(hooks_before)
        snapshot.restore()
    synchronized = torch.cuda.is_available() and torch.cuda.is_initialized()
    steady, eager = sampling.call_timings(samples)
    return RunTiming(
        graphs=graphs,
        first_call_s=first_call_s,
        compile_s=compile_s,
        steady=steady,
        eager=eager,
        recompiles=recompiles,
        backend=backend_name,
        synchronized=synchronized,
        budget_s=sampling.budget_s if sampling.calls is None else None,
        cost_s=round(time.perf_counter() - started, 4),
    )


__all__ = [
    "DEFAULT_BUDGET_S",
    "DEFAULT_MAX_CALLS",
    "DEFAULT_MIN_CALLS",
    "DEFAULT_WARMUP",
    "CompiledCall",
    "ObservedCall",
    "Sampling",
    "observing_compiled_calls",
    "settings_of",
    "time_calls",
    "time_compiled",
]
