"""Trace payloads nstviz drops are not computed while it alone listens; other listeners get them all.

Real ``torch.compile`` runs under :func:`nstviz.capture.trace_log.collecting`. A second handler
on ``torch.__trace`` (what ``TORCH_TRACE`` or a user's handler is) stands for anyone else.
pytest attaches its own capture handlers to that logger (it does so to every logger that does
not propagate): they are taken off for each test here, as in a user's process, else they too
would count as listeners wanting every payload.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator

import pytest
import torch

from nstviz.capture._torch_compat.trace_payloads import payloads_read_only
from nstviz.capture.trace_log import collecting


def _helper(x: torch.Tensor) -> torch.Tensor:
    torch._dynamo.graph_break()
    return x * 2


def _fn(x: torch.Tensor) -> torch.Tensor:
    return _helper(x.sin()) + 1


class _Records(logging.Handler):
    """Every structured-trace record: (name, payload)."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.seen: list[tuple[str, str | None]] = []

    def emit(self, record: logging.LogRecord) -> None:
        meta = getattr(record, "metadata", {})
        name = next((k for k in meta if k not in ("frame_id", "frame_compile_id", "attempt", "rank")), "")
        if name == "artifact":
            name = meta["artifact"].get("name", "")
        self.seen.append((name, getattr(record, "payload", None)))


@pytest.fixture
def trace_log() -> Iterator[logging.Logger]:
    from torch._logging._internal import trace_log as log

    torch._dynamo.reset()
    yield log
    torch._dynamo.reset()


@contextlib.contextmanager
def _without_pytests_handlers(log: logging.Logger) -> Iterator[None]:
    """pytest attaches its handlers per test phase: taken off inside the test's own call."""
    pytests = [h for h in log.handlers if type(h).__module__ == "_pytest.logging"]
    for handler in pytests:
        log.removeHandler(handler)
    try:
        yield
    finally:
        for handler in pytests:
            log.addHandler(handler)


def _payloads(records: _Records, name: str) -> list[str | None]:
    return [payload for n, payload in records.seen if n == name]


def _bindings() -> dict[str, object]:
    return {n: m.__dict__["trace_structured"] for n, m in list(sys.modules.items())
            if (n == "torch" or n.startswith("torch.")) and m is not None and "trace_structured" in m.__dict__}


def test_alone_nstviz_lets_torch_skip_the_graph_printout_it_drops(trace_log: logging.Logger) -> None:
    computed: list[str] = []
    original = torch.fx.GraphModule.print_readable

    def counted(self: torch.fx.GraphModule, *args: object, **kwargs: object) -> str:
        computed.append(type(self).__name__)
        return original(self, *args, **kwargs)

    torch.fx.GraphModule.print_readable = counted  # type: ignore[method-assign]
    try:
        with _without_pytests_handlers(trace_log), collecting() as collector:
            torch.compile(_fn, backend="eager")(torch.ones(3))
    finally:
        torch.fx.GraphModule.print_readable = original  # type: ignore[method-assign]
    # the eager backend prints nothing itself: before, torch printed each Dynamo graph for nstviz to drop
    assert computed == []
    # what nstviz reads is all there: the break with its payload, the compiles
    breaks = collector.of_kind("dynamo_graph_break_reason")
    assert breaks and all(b.payload and "graph_break" in b.payload for b in breaks)
    assert len(collector.of_kind("dynamo_start")) >= 2
    guards = collector.of_kind("dynamo_cpp_guards_str") + collector.of_kind("dynamo_guards")
    assert guards and all(e.payload for e in guards)


def test_another_listener_gets_every_payload_as_without_nstviz(trace_log: logging.Logger) -> None:
    records = _Records()
    trace_log.addHandler(records)
    try:
        with _without_pytests_handlers(trace_log), collecting() as collector:
            torch.compile(_fn, backend="eager")(torch.ones(3))
    finally:
        trace_log.removeHandler(records)
    graphs = _payloads(records, "dynamo_output_graph")
    assert len(graphs) >= 2 and all(g and "class GraphModule" in g for g in graphs)
    assert collector.of_kind("dynamo_graph_break_reason")


def test_torchs_bindings_are_put_back_also_after_an_error(trace_log: logging.Logger) -> None:
    from torch._logging import _internal

    before = _bindings()
    torchs = {n for n, f in before.items() if f is _internal.trace_structured}
    assert len(torchs) > 5  # torch's modules bind trace_structured by name
    listener = logging.NullHandler()
    trace_log.addHandler(listener)
    try:
        with _without_pytests_handlers(trace_log), pytest.raises(RuntimeError, match="inside"):
            with payloads_read_only(listener, lambda name, meta: False):
                now = _bindings()
                assert all(now[n] is not before[n] for n in torchs)
                raise RuntimeError("inside")
    finally:
        trace_log.removeHandler(listener)
    assert _bindings() == before


def _grad_fn(x: torch.Tensor) -> torch.Tensor:
    return (x.sin() * 2).cos()


@contextlib.contextmanager
def _printouts(computed: list[str]) -> Iterator[None]:
    original = torch.fx.GraphModule.print_readable

    def counted(self: torch.fx.GraphModule, *args: object, **kwargs: object) -> str:
        computed.append(type(self).__name__)
        return original(self, *args, **kwargs)

    torch.fx.GraphModule.print_readable = counted  # type: ignore[method-assign]
    try:
        yield
    finally:
        torch.fx.GraphModule.print_readable = original  # type: ignore[method-assign]


def test_alone_nstviz_lets_aotautograd_skip_its_graph_printouts(trace_log: logging.Logger) -> None:
    computed: list[str] = []
    with _printouts(computed), _without_pytests_handlers(trace_log), collecting() as collector:
        out = torch.compile(_grad_fn, backend="aot_eager")(torch.ones(3, requires_grad=True))
    # before, AOTAutograd printed the joint, forward and backward graphs, which nstviz never reads
    assert computed == []
    out.sum().backward()  # the compiled code still runs forward and backward
    assert collector.of_kind("dynamo_start") and collector.of_kind("compilation_metrics")


def test_alone_nstviz_receives_only_the_records_it_reads(trace_log: logging.Logger) -> None:
    received: list[logging.LogRecord] = []
    with _without_pytests_handlers(trace_log), collecting() as collector:
        emit = collector.emit
        collector.emit = lambda record: (received.append(record), emit(record))[1]  # type: ignore[method-assign]
        torch.compile(_fn, backend="aot_eager")(torch.ones(3))
    names = [next(iter(r.metadata)) for r in received]
    assert names and all(
        collector.reads_record(name, lambda r=r, name=name: r.metadata[name]) for r, name in zip(received, names, strict=True)
    )
    # what it reads is all there: the break with its payload, the compiles, the guards
    assert collector.of_kind("dynamo_graph_break_reason") and len(collector.of_kind("dynamo_start")) >= 2
    assert collector.of_kind("dynamo_cpp_guards_str") + collector.of_kind("dynamo_guards")


def test_aot_printouts_stay_for_another_listener_and_for_aots_own_log(trace_log: logging.Logger) -> None:
    records = _Records()
    trace_log.addHandler(records)
    try:
        with _without_pytests_handlers(trace_log), collecting():
            torch.compile(_grad_fn, backend="aot_eager")(torch.ones(3, requires_grad=True))
    finally:
        trace_log.removeHandler(records)
    for name in ("aot_joint_graph", "aot_forward_graph", "aot_backward_graph"):
        assert any(p and "class" in p for p in _payloads(records, name)), name
    from torch._functorch._aot_autograd.graph_compile import aot_graphs_log

    computed: list[str] = []
    level = aot_graphs_log.level
    aot_graphs_log.setLevel(logging.INFO)  # what TORCH_LOGS=aot_graphs does
    try:
        torch._dynamo.reset()
        with _printouts(computed), _without_pytests_handlers(trace_log), collecting():
            torch.compile(_grad_fn, backend="aot_eager")(torch.ones(3, requires_grad=True))
    finally:
        aot_graphs_log.setLevel(level)
    assert computed  # the forward and backward graphs were printed for AOTAutograd's logger


def test_a_file_name_torch_interned_while_nobody_listened_is_still_read(trace_log: logging.Logger) -> None:
    from torch._logging.structured import intern_string

    namespace: dict[str, object] = {}
    exec(compile("def outer(f, x):\n    return f(x)\n", "<nstviz-unheard>", "exec"), namespace)
    handlers = list(trace_log.handlers)
    for handler in handlers:  # nobody listens (a compile outside a capture, or torch's idle LazyTraceHandler)
        trace_log.removeHandler(handler)
    try:
        intern_string("<nstviz-unheard>")  # torch announces a string once, to whoever listens then
        with collecting() as collector:
            namespace["outer"](torch.compile(_fn, backend="eager"), torch.ones(3))  # type: ignore[operator]
    finally:
        for handler in handlers:
            trace_log.addHandler(handler)
    files = {f["file"] for e in collector.of_kind("dynamo_start") for f in e.metadata["stack"]}
    assert "<nstviz-unheard>" in files
