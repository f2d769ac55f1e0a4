"""Recording backends: keep every graph a run compiles, at the Dynamo and ATen levels.

While a :class:`Recorder` is active, every Dynamo compile (of any ``torch.compile`` object,
also one created before nstviz ran) goes through it (``_torch_compat.intercept_backends``).
It converts the Dynamo ``GraphModule`` at once (so no GraphModule outlives the run), then
compiles with the chosen backend:

- ``"record"`` (default): ``aot_autograd`` with recording forward/backward/inference
  compilers that keep the ATen graphs and run them as they are (no inductor codegen);
- ``"inductor"``: the real inductor; its forward/backward/inference graphs (before its
  passes) and its post-grad graphs (``inductor_post_grad``) are recorded;
- ``"as_written"``: each compiled object's own backend; only the Dynamo graph is recorded
  (ATen graphs too when that backend is inductor or ``aot_eager``);
- any other backend name or callable: that backend, recording the Dynamo graph around it.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from nstviz.capture import _torch_compat
from nstviz.capture.convert import convert_graph
from nstviz.report import CompileId, Graph
from nstviz.tracing.stacks import StackTable

Backend = str | Callable[..., Any]
GRAPH_RUNS_KEPT = 10_000
"""How many graph runs :attr:`Recorder.graph_runs` keeps (the first ones: enough to place every op)."""


@dataclass(slots=True)
class NonstrictCall:
    """An opaque non-strict call node seen in a Dynamo graph, and the function behind it."""

    graph_id: str
    node: str
    function: Callable[..., Any] | None
    name: str


@dataclass(slots=True)
class _CompileInfo:
    frame_id: int
    compile_id: int
    attempt: int
    function: str
    prefix: str
    dynamo_graph_id: str
    dynamo_fx_ids: set[int] = field(default_factory=set)


class Recorder:
    """Collects the graphs of one run. Use :meth:`active` as a context manager."""

    def __init__(self, backend: Backend, stacks: StackTable) -> None:
        self.backend = backend
        self.stacks = stacks
        self.graphs: list[Graph] = []
        self.nonstrict_calls: list[NonstrictCall] = []
        self.leaf_calls: list[NonstrictCall] = []
        """Calls of ``leaf_function``-decorated functions (an ``invoke_leaf_function`` node each)."""
        self.errors: list[str] = []
        self.graph_runs: list[str] = []
        """Ids of the Dynamo graphs in the order their compiled code ran (the first :data:`GRAPH_RUNS_KEPT`)."""
        self._ids: set[str] = set()
        self._inductor_compile: _CompileInfo | None = None
        self._counting_on = [True]
        """Whether the compiled graphs still note their runs: off from :meth:`release` on, so a
        timing of the run's compiled code (:mod:`nstviz.capture.reused_timing`) does not pay for it."""

    # -- plumbing -------------------------------------------------------------------------

    @contextlib.contextmanager
    def active(self) -> Iterator[Recorder]:
        """Intercept every Dynamo compile while the block runs."""
        with contextlib.ExitStack() as stack:
            stack.enter_context(_torch_compat.intercept_backends(self._wrap))
            stack.enter_context(_torch_compat.own_lines())
            if self._uses_inductor() and (slot := _torch_compat.post_grad_hook_slot()) is not None:
                stack.enter_context(self._post_grad_hook(slot))
            yield self

    def release(self) -> None:
        """Drop what was recorded, once the run has been converted.

        Dynamo's compiled code closes over the recording backend, and Dynamo leaves that code in
        the user's globals (``__compiled_fn_*``) after the run: without this, every run's graphs
        would stay alive as long as the notebook (measured: ~1.7 MB per %%nstrace of a training
        step). A late compile (e.g. a lazy backward) still works and records into empty lists.
        """
        self.graphs = []
        self.nonstrict_calls = []
        self.leaf_calls = []
        self.errors = []
        self.graph_runs = []
        self._ids = set()
        self.stacks = StackTable()
        self._inductor_compile = None
        self._counting_on[0] = False

    def _uses_inductor(self) -> bool:
        return self.backend in ("inductor", "as_written")

    def _unique(self, gid: str) -> str:
        base, n = gid, 1
        while gid in self._ids:
            n += 1
            gid = f"{base}#{n}"
        self._ids.add(gid)
        return gid

    def _convert(self, gm: Any, info: _CompileInfo, level: str, dynamo_ids: set[int] | None) -> Graph:
        header = Graph(
            id=self._unique(f"{info.prefix}:{level}"),
            level=level,  # type: ignore[arg-type]
            frame_id=info.frame_id,
            compile_id=info.compile_id,
            attempt=info.attempt,
            function=info.function,
        )
        graph = convert_graph(gm, header, stacks=self.stacks, dynamo_graph_ids=dynamo_ids)
        self.graphs.append(graph)
        return graph

    # -- the backend ----------------------------------------------------------------------

    def _wrap(self, original: Callable[..., Any], co_name: str) -> Callable[..., Any]:
        def recording_backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
            frame_id, compile_id, attempt = _torch_compat.current_compile_ids()
            prefix = CompileId(frame_id=frame_id, frame_compile_id=compile_id, attempt=attempt).text
            info = _CompileInfo(frame_id, compile_id, attempt, co_name, prefix, "")
            try:
                dyn = self._convert(gm, info, "dynamo", None)
                info.dynamo_graph_id = dyn.id
                info.dynamo_fx_ids = {id(gm.graph)}
                self._collect_nonstrict_calls(gm, dyn.id)
            except Exception as exc:  # recording must never break the user's compile
                self.errors.append(f"could not record the Dynamo graph of {prefix}: {exc!r}")
            return self._counting(self._compile(original, gm, example_inputs, info), info)

        return recording_backend

    def _counting(self, compiled: Any, info: _CompileInfo) -> Any:
        """``compiled``, noting its Dynamo graph's id in :attr:`graph_runs` each time it runs."""
        gid = info.dynamo_graph_id
        if not gid or not callable(compiled):
            return compiled
        runs, on = self.graph_runs, self._counting_on

        @functools.wraps(compiled)
        def run(*args: Any, **kwargs: Any) -> Any:
            if on[0] and len(runs) < GRAPH_RUNS_KEPT:
                runs.append(gid)
            return compiled(*args, **kwargs)

        return run

    def _compile(self, original: Callable[..., Any], gm: Any, example_inputs: list[Any], info: _CompileInfo) -> Any:
        backend = self.backend
        # aot_eager is exactly what "record" runs: record its ATen graphs too
        if backend in ("record", "aot_eager") or (
            backend == "as_written" and _torch_compat.backend_name(original) == "aot_eager"
        ):
            return self._aot_record(gm, example_inputs, info)
        if backend == "inductor" or (backend == "as_written" and _torch_compat.is_inductor(original)):
            return self._inductor(gm, example_inputs, info)
        if backend == "as_written":
            return original(gm, example_inputs)
        compiler = _torch_compat.lookup_backend(backend) if isinstance(backend, str) else backend
        return compiler(gm, example_inputs)

    def _aten_compiler(self, info: _CompileInfo, level: str, inner: Callable[..., Any]) -> Callable[..., Any]:
        def compiler(gm: torch.fx.GraphModule, example_inputs: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                self._convert(gm, info, level, info.dynamo_fx_ids)
            except Exception as exc:
                self.errors.append(f"could not record the {level} graph of {info.prefix}: {exc!r}")
            return inner(gm, example_inputs, *args, **kwargs)

        return compiler

    def _aot_record(self, gm: Any, example_inputs: list[Any], info: _CompileInfo) -> Any:
        backend = _torch_compat.aot_record_backend(lambda level, nop: self._aten_compiler(info, level, nop))
        if backend is None:  # this torch's AOTAutograd is not what nstviz knows (noted): run as traced
            return gm.forward
        return backend(gm, example_inputs)

    def _inductor(self, gm: Any, example_inputs: list[Any], info: _CompileInfo) -> Any:
        compilers = _torch_compat.inductor_compilers()
        if compilers is None:  # noted: inductor compiles unrecorded
            return _torch_compat.lookup_backend("inductor")(gm, example_inputs)
        compile_fx, compile_fx_inner = compilers

        def inner(gm2: torch.fx.GraphModule, example_inputs2: Any, *args: Any, **kwargs: Any) -> Any:
            if kwargs.get("is_backward"):
                level = "aten_backward"
            elif kwargs.get("is_inference"):
                level = "aten_inference"
            else:
                level = "aten_forward"
            try:
                self._convert(gm2, info, level, info.dynamo_fx_ids)
            except Exception as exc:
                self.errors.append(f"could not record the {level} graph of {info.prefix}: {exc!r}")
            previous = self._inductor_compile
            self._inductor_compile = info
            try:
                return compile_fx_inner(gm2, example_inputs2, *args, **kwargs)
            finally:
                self._inductor_compile = previous

        return compile_fx(gm, example_inputs, inner_compile=inner)

    @contextlib.contextmanager
    def _post_grad_hook(self, slot: tuple[Any, str]) -> Iterator[None]:
        config, name = slot
        previous = getattr(config, name)
        recorder = self

        class _RecordPostGrad(_custom_pass_base()):  # type: ignore[misc]
            def __call__(self, graph: torch.fx.Graph) -> None:
                if previous is not None:
                    previous(graph)
                info = recorder._inductor_compile
                if info is None:
                    return
                try:
                    recorder._convert(graph, info, "inductor_post_grad", info.dynamo_fx_ids)
                except Exception as exc:
                    recorder.errors.append(f"could not record the post-grad graph of {info.prefix}: {exc!r}")

        setattr(config, name, _RecordPostGrad())
        try:
            yield
        finally:
            setattr(config, name, previous)

    # -- non-strict calls -----------------------------------------------------------------

    def _collect_nonstrict_calls(self, gm: torch.fx.GraphModule, graph_id: str) -> None:
        for node in gm.graph.nodes:
            if node.op != "call_function":
                continue
            target_name = getattr(node.target, "__name__", "")
            if target_name == _torch_compat.LEAF_FUNCTION_NAME:
                self._collect_leaf_call(gm, node, graph_id)
                continue
            if _torch_compat.FLAT_APPLY_NAME not in target_name:
                continue
            fn = None
            name = node.name
            callable_node = node.args[0] if node.args else None
            if isinstance(callable_node, torch.fx.Node) and callable_node.op == "get_attr":
                with contextlib.suppress(AttributeError):
                    fn = _torch_compat.leaf_callable_function(getattr(gm, str(callable_node.target)))
                name = str(callable_node.target).rsplit("_callable", 1)[0]
            if fn is not None:
                name = getattr(fn, "__qualname__", name)
            self.nonstrict_calls.append(NonstrictCall(graph_id=graph_id, node=node.name, function=fn, name=name))

    def _collect_leaf_call(self, gm: torch.fx.GraphModule, node: torch.fx.Node, graph_id: str) -> None:
        """A call of a ``torch._dynamo.decorators.leaf_function`` (its first argument holds the real function)."""
        fn = None
        real = node.args[0] if node.args else None
        if isinstance(real, torch.fx.Node) and real.op == "get_attr":
            with contextlib.suppress(AttributeError):
                fn = _torch_compat.leaf_user_function(getattr(gm, str(real.target)))
        name = getattr(fn, "__qualname__", None) or node.name
        self.leaf_calls.append(NonstrictCall(graph_id=graph_id, node=node.name, function=fn, name=name))


@functools.cache
def _custom_pass_base() -> type:
    base = _torch_compat.custom_graph_pass_base()
    if base is None:  # pragma: no cover

        class Plain:
            pass

        return Plain

    class Base(base):  # type: ignore[misc, valid-type]
        def uuid(self) -> Any:  # a fresh id per run: never reuse inductor's cache
            return None

    return Base


__all__ = ["Backend", "NonstrictCall", "Recorder"]
