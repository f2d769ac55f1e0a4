"""Turn what torch produced (GraphModules, trace events, exceptions) into Report values.

Pure conversions with no torch private API of their own: FX ``GraphModule`` -> :class:`Graph`,
``Unsupported`` errors -> break hits (:class:`~nstviz.tracing.breaks.BreakHit`, made into
Breaks with the logged ones by :func:`nstviz.tracing.breaks.link_breaks`). User stacks are
interned in a :class:`StackTable` shared by a Report.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import traceback
from collections.abc import Sequence
from typing import Any

import torch
import torch.fx

from nstviz.capture import _torch_compat
from nstviz.capture._dtypes import short_dtype
from nstviz.report import CompileId, Graph, Location, Node, TensorInfo
from nstviz.tracing import MAX_NODES_PER_GRAPH
from nstviz.tracing.breaks import RECOMPILE_LIMIT_RE, BreakHit, clean_detail, make_hit, parse_message
from nstviz.tracing.stacks import (
    StackTable,
    is_user_file,
    location_from_frame,
    parse_frames,
    register_live_torch_root,
)

# The running torch is the one that made a live capture's stacks (logs read offline use their own).
register_live_torch_root(os.path.dirname(os.path.abspath(torch.__file__)))


# -- graphs ---------------------------------------------------------------------------------


def _dtype(dtype: Any) -> str:
    return short_dtype(dtype)


def _tensor_info(value: Any) -> TensorInfo | None:
    if isinstance(value, torch.Tensor):
        try:
            shape = tuple(int(s) if isinstance(s, int) else str(s) for s in value.shape)
            return TensorInfo(
                shape=shape,
                dtype=_dtype(value.dtype),
                device=str(value.device),
                requires_grad=bool(value.requires_grad),
            )
        except Exception:  # e.g. sparse / nested tensors without sizes
            return TensorInfo(shape=(), dtype=_dtype(value.dtype), device=str(value.device))
    return None


def _values_meta(meta: dict[str, Any]) -> tuple[tuple[TensorInfo, ...], str | None]:
    value = meta.get("val", meta.get("example_value"))
    if value is None:
        return (), None
    info = _tensor_info(value)
    if info is not None:
        return (info,), None
    if isinstance(value, (tuple, list)):
        infos = tuple(i for i in (_tensor_info(v) for v in value) if i is not None)
        return infos, None
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool, int, float, bool)):
        return (), str(value)[:80]
    return (), None


def readable_target(node: torch.fx.Node) -> str:
    """``aten.mm.default``, ``operator.add``, ``torch.sin``, a method or module name."""
    target = node.target
    if node.op != "call_function":
        return str(target)
    if _torch_compat.is_op_overload(target):
        return str(target)
    name = getattr(target, "__name__", "") or ""
    if _torch_compat.FLAT_APPLY_NAME in name:
        return "nonstrict_trace"
    try:
        qual = _torch_compat.fx_qualified_name(target)
    except Exception:
        qual = name or repr(target)
    return qual.replace("_operator.", "operator.")


_MODULE_KEY_RE = re.compile(r"\[['\"]?([^'\"\]]+)['\"]?\]")


@functools.lru_cache(maxsize=4096)  # a graph has a few paths, each on many nodes
def module_path(raw: str) -> str:
    """``L['self'].blocks[0].attn`` / ``L['self']._modules['blocks']`` -> ``blocks.0.attn``."""
    text = re.sub(r"^[LG]\['self'\]\.?", "", raw)
    text = re.sub(r"^[LG]\['([^']+)'\]", r"\1", text)
    text = text.replace("._modules", "").replace("_modules", "")
    text = _MODULE_KEY_RE.sub(r".\1", text)
    return ".".join(p for p in text.split(".") if p)


def _module_of(meta: dict[str, Any]) -> tuple[str | None, str | None]:
    stack = meta.get("nn_module_stack")
    if not stack:
        return None, None
    try:
        path, kind = list(stack.values())[-1]
    except (ValueError, TypeError):
        return None, None
    if isinstance(kind, type):
        type_name = kind.__name__
    else:
        type_name = str(kind).rsplit(".", 1)[-1].strip("'>")
    return module_path(str(path)) or None, type_name


def root_source(node: torch.fx.Node, dynamo_graph_ids: set[int]) -> str | None:
    """Name of the Dynamo node an ATen node came from (``node.meta["from_node"]``)."""
    sources = node.meta.get("from_node")
    seen = 0
    while sources and seen < 64:
        seen += 1
        src = sources[-1] if len(sources) > 1 else sources[0]
        for s in sources:
            if getattr(s, "graph_id", None) in dynamo_graph_ids:
                return str(s.name)
        nxt = getattr(src, "from_node", None)
        if not nxt:
            return str(getattr(src, "name", "")) or None
        sources = nxt
    return None


def convert_graph(
    gm: torch.fx.GraphModule | torch.fx.Graph,
    header: Graph,
    *,
    stacks: StackTable,
    dynamo_graph_ids: set[int] | None = None,
    max_nodes: int | None = None,
) -> Graph:
    """Convert one FX graph into a :class:`Graph` (nodes with edges, meta and provenance).

    ``header`` is the graph without its nodes: its id, level and the compile that made it.
    """
    graph = gm.graph if isinstance(gm, torch.fx.GraphModule) else gm
    if max_nodes is None:
        max_nodes = MAX_NODES_PER_GRAPH
    nodes: list[Node] = []
    op_count = 0
    truncated = False
    for fx_node in graph.nodes:
        if fx_node.op.startswith("call_"):
            op_count += 1
        if len(nodes) >= max_nodes:
            truncated = True
            continue
        nodes.append(_node(fx_node, stacks, dynamo_graph_ids))
    return dataclasses.replace(header, nodes=tuple(nodes), op_count=op_count, truncated=truncated)


def _node(fx_node: torch.fx.Node, stacks: StackTable, dynamo_graph_ids: set[int] | None) -> Node:
    """One FX node as a :class:`Node`: its inputs, values, stack, module and provenance."""
    meta = fx_node.meta
    tensors, value = _values_meta(meta)
    module, module_type = _module_of(meta)
    extra: dict[str, str] = {}
    if "seq_nr" in meta:
        extra["seq_nr"] = str(meta["seq_nr"])
    target = readable_target(fx_node)
    original = meta.get("original_aten")
    if original is not None and str(original) != target:
        extra["original_aten"] = str(original)
    return Node(
        name=fx_node.name,
        op=fx_node.op,
        target=target,
        inputs=tuple(dict.fromkeys(n.name for n in fx_node.all_input_nodes)),
        tensors=tensors,
        value=value,
        stack=stacks.intern_text(meta.get("stack_trace")),
        module=module,
        module_type=module_type,
        from_node=root_source(fx_node, dynamo_graph_ids) if dynamo_graph_ids else None,
        nonstrict_call=target == "nonstrict_trace",
        extra=extra,
    )


# -- breaks ---------------------------------------------------------------------------------


def find_unsupported(exc: BaseException | None) -> BaseException | None:
    """The Dynamo ``Unsupported`` error in ``exc`` or its cause/context chain."""
    types = _torch_compat.unsupported_types()
    seen = 0
    while exc is not None and seen < 16:
        if isinstance(exc, types):
            return exc
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def root_cause_of(exc: BaseException) -> str | None:
    """The underlying exception Dynamo converted into a break (e.g. for GB0251)."""
    inner = exc.__cause__ or exc.__context__
    seen = 0
    while inner is not None and seen < 8:
        if not isinstance(inner, _torch_compat.unsupported_types()):
            from nstviz.passes.causes import unwrap_fake_tensor_error  # the error inside

            first = str(inner).strip().splitlines()[0] if str(inner).strip() else ""
            return unwrap_fake_tensor_error(f"{type(inner).__name__}: {first}", str(inner))
        inner = inner.__cause__ or inner.__context__
        seen += 1
    return None


def break_from_exception(exc: BaseException) -> BreakHit | None:
    """The fatal break hit of a ``fullgraph=True`` compile that raised ``Unsupported``."""
    unsupported = find_unsupported(exc)
    if unsupported is None:
        return None
    message = str(unsupported)
    head = message.split("\nfrom user code:\n", 1)[0]
    info = parse_message(head)
    real = getattr(unsupported, "real_stack", None)
    stack: list[Location] = []
    if real:
        stack = [location_from_frame(f) for f in real if is_user_file(f.filename)]
    if not stack and "\nfrom user code:\n" in message:
        stack = parse_frames(message.split("\nfrom user code:\n", 1)[1].splitlines())
    if not stack:
        tb = traceback.extract_tb(exc.__traceback__)
        stack = [location_from_frame(f) for f in tb if is_user_file(f.filename)][-1:]
    if not stack:
        return None
    compile_id = getattr(unsupported, "compile_id", None)  # torch's CompileId: its text is tlparse's
    return make_hit(
        info, stack[-1], stack, clean_detail(head), CompileId.parse(str(compile_id)) if compile_id else None,
        fatal=True, caused=0,  # a fullgraph error stops the compile; Dynamo counts no graph break
        root_cause=root_cause_of(unsupported) or None,
    )


def fatal_breaks(
    error: BaseException | None,
    compile_errors: Sequence[tuple[tuple[int | None, int | None, int], BaseException]],
    logged: set[tuple[int | None, int | None]],
) -> list[BreakHit]:
    """The fatal breaks of one run: each ``fullgraph=True`` compile that failed on a graph break.

    Caught by the user's code or not, the failure is the same break. ``error`` is the exception
    the run raised (when the code did not catch it); ``compile_errors`` the live exceptions of
    the run's failed compiles (:attr:`~nstviz.capture.trace_log.TraceCollector.compile_errors`);
    ``logged`` the ``(frame, compile)`` ids that logged a graph-break artifact. A failed compile
    that logged its break fell back to eager (no fullgraph): not fatal, as offline ingest
    decides. A frame refused for hitting ``recompile_limit`` is not a break (it runs eagerly).
    """
    out: list[BreakHit] = []
    seen: set[int] = set()
    raised = find_unsupported(error)
    if error is not None and raised is not None:
        brk = break_from_exception(error)
        if brk is not None:
            out.append(brk)
            seen.add(id(raised))
    for (frame, compile_id, _attempt), exc in compile_errors:
        unsupported = find_unsupported(exc)
        if unsupported is None or id(unsupported) in seen or (frame, compile_id) in logged:
            continue
        if RECOMPILE_LIMIT_RE.search(str(unsupported)):
            continue
        seen.add(id(unsupported))
        brk = break_from_exception(exc)
        if brk is not None:
            out.append(brk)
    return out


__all__ = [
    "break_from_exception",
    "convert_graph",
    "fatal_breaks",
    "find_unsupported",
    "module_path",
    "readable_target",
    "root_cause_of",
    "root_source",
]
