"""Parse the graph text of a TORCH_TRACE log (FX ``print_readable``) into Report nodes.

TORCH_TRACE logs a graph as the Python text ``GraphModule.print_readable`` prints, e.g.::

    class GraphModule(torch.nn.Module):
        def forward(self, L_x_: "f32[4, 8][8, 1]cpu"):
            l_x_ = L_x_

            # File: /work/train.py:49 in forward, code: h = torch.relu(self.inp(x))
            relu: "f32[4, 8][8, 1]cpu" = torch.relu(l_x_);  l_x_ = None
            return (relu,)

:func:`parse_graph_text` turns the top-level ``forward`` of that text into a :class:`Graph`:
one :class:`Node` per statement with its ``op`` (FX's closed set), ``target`` (written as
:func:`nstviz.capture.convert.readable_target` writes it: ``aten.relu.default``,
``torch.relu``, ``operator.getitem``, ``nonstrict_trace``), ``inputs`` (the edges: names of
earlier nodes it reads), tensor type (``f32[4, 8]`` on ``cpu``) and the ``# File:`` location
above it (interned in the Report's stack table). What the text does not hold (module paths,
``from_node`` provenance) stays empty; nothing is invented. Nested submodules (higher-order
op bodies) are not expanded.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from nstviz.report import Graph, Location, Node, TensorInfo
from nstviz.tracing import MAX_NODES_PER_GRAPH
from nstviz.tracing.stacks import StackTable, is_user_file

MAX_CODE_CHARS = 200_000
"""Graph text kept as :attr:`Graph.code` up to this size (larger graphs keep nodes only)."""

_ASSIGN_RE = re.compile(r'^([A-Za-z_]\w*)\s*(?::\s*("[^"]*"|[^=]+?))?\s*=\s*(.+)$')
_DEL_RE = re.compile(r";\s+(?:[A-Za-z_]\w*\s*=\s*)+None\s*$")
_PARAM_RE = re.compile(r'([A-Za-z_]\w*)\s*:\s*"([^"]*)"')
_BARE_PARAM_RE = re.compile(r"(?:^|,)\s*([A-Za-z_]\w*)\s*(?=,|$)")
_NAME_RE = re.compile(r"[A-Za-z_]\w*")
_TENSOR_RE = re.compile(r"^([a-z]+\d*(?:_[a-z0-9]+)?)\[([^\]]*)\](?:\[[^\]]*\])?([a-z]+(?::\d+)?)$")
_FILE_RE = re.compile(r"^# File: (.+):(\d+) in ([^,]+), code: (.*)$")
_CALL_RE = re.compile(r"^([\w.]+)\((.*)\)$", re.S)
_METHOD_RE = re.compile(r"^([A-Za-z_]\w*)\.(\w+)\((.*)\)$", re.S)
_GETITEM_RE = re.compile(r"^([A-Za-z_]\w*)\[(.*)\]$")
_FLAT_APPLY = "flat_apply"
# FX prints Python operators infix (`mul = sin * 2`): operator -> the `operator` function name
_BINARY = {
    "+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv", "%": "mod", "**": "pow",
    "@": "matmul", "<<": "lshift", ">>": "rshift", "&": "and_", "|": "or_", "^": "xor",
    "==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge",
}  # fmt: skip
_UNARY = {"-": "neg", "+": "pos", "~": "invert"}
_OPERAND = r"(?:[A-Za-z_]\w*|-?[\d.]+(?:e[-+]?\d+)?|None|True|False)"
_BINARY_RE = re.compile(rf"^({_OPERAND}) (\*\*|//|<<|>>|==|!=|<=|>=|[-+*/%@&|^<>]) ({_OPERAND})$")
_UNARY_RE = re.compile(r"^([-+~])([A-Za-z_]\w*)$")


def tensor_info(annotation: str) -> TensorInfo | None:
    """``"f32[4, 8][8, 1]cpu"`` -> ``TensorInfo(shape=(4, 8), dtype="f32", device="cpu")``."""
    m = _TENSOR_RE.match(annotation)
    if m is None:
        return None
    dims = [d.strip() for d in m[2].split(",") if d.strip()]
    shape = tuple(int(d) if d.isdigit() else d for d in dims)
    return TensorInfo(shape=shape, dtype=m[1], device=m[3])


def _target(text: str) -> str:
    if text.startswith("torch.ops."):
        return text[10:]
    if _FLAT_APPLY in text:
        return "nonstrict_trace"
    if text.startswith("_operator."):
        return "operator." + text[10:]
    return text


class _Builder:
    """State of one parse: known node names, the current location, the nodes kept."""

    def __init__(self, stacks: StackTable, max_nodes: int) -> None:
        self.stacks = stacks
        self.max_nodes = max_nodes
        self.nodes: list[Node] = []
        self.names: set[str] = set()
        self.placeholders: dict[str, int] = {}  # argument name -> index in nodes
        self.stack: int | None = None
        self.op_count = 0
        self.truncated = False
        self._loc_cache: dict[str, int | None] = {}

    def add(self, node: Node) -> None:
        if node.op.startswith("call_"):
            self.op_count += 1
        self.names.add(node.name)
        if len(self.nodes) >= self.max_nodes:
            self.truncated = True
            return
        self.nodes.append(node)

    def inputs(self, text: str) -> tuple[str, ...]:
        names = self.names
        return tuple(dict.fromkeys(n for n in _NAME_RE.findall(text) if n in names))

    def location(self, comment: str) -> None:
        cached = self._loc_cache.get(comment, -1)
        if cached != -1:
            self.stack = cached  # type: ignore[assignment]
            return
        m = _FILE_RE.match(comment)
        idx = None
        if m is not None and is_user_file(m[1]):
            loc = Location(file=m[1], line=int(m[2]), function=m[3].strip(), code=m[4].strip() or None)
            idx = self.stacks.intern((loc,))
        self._loc_cache[comment] = idx
        self.stack = idx

    def placeholder(self, name: str, annotation: str | None) -> None:
        tensors, value = _types(annotation)
        self.placeholders[name] = len(self.nodes)
        self.add(Node(name=name, op="placeholder", target=name, tensors=tensors, value=value))

    def statement(self, text: str) -> None:
        if text.startswith("return"):
            rest = text[6:].strip()
            self.add(Node(name="output", op="output", target="output", inputs=self.inputs(rest)))
            return
        m = _ASSIGN_RE.match(text)
        if m is None:
            return
        rhs = m[3]
        if ";" in rhs:
            rhs = _DEL_RE.sub("", rhs)
        name, annotation, rhs = m[1], m[2], rhs.strip()
        if annotation is not None:
            annotation = annotation.strip().strip('"')
        if self._renamed_placeholder(name, rhs):
            return
        tensors, value = _types(annotation)
        op, target, inputs = self._operation(rhs)
        self.add(
            Node(
                name=name,
                op=op,  # type: ignore[arg-type]
                target=target,
                inputs=inputs,
                tensors=tensors,
                value=value,
                stack=self.stack,
                nonstrict_call=op == "call_function" and target == "nonstrict_trace",
            )
        )

    def _renamed_placeholder(self, name: str, rhs: str) -> bool:
        """``l_x_ = L_x_``: Dynamo's placeholder node is named ``l_x_``, its target ``L_x_`` (True: renamed)."""
        if not (rhs in self.placeholders and rhs not in self.names - set(self.placeholders)):
            return False
        idx = self.placeholders.pop(rhs)
        if idx < len(self.nodes):
            old = self.nodes[idx]
            self.nodes[idx] = Node(name=name, op="placeholder", target=old.target, tensors=old.tensors, value=old.value)
        self.names.discard(rhs)
        self.names.add(name)
        return True

    def _operation(self, rhs: str) -> tuple[str, str, tuple[str, ...]]:
        """The FX ``op``, ``target`` and input names of an assignment's right-hand side."""
        if rhs.startswith("self."):
            attr = rhs[5:]
            call = _CALL_RE.match(attr)
            if call is not None:
                return "call_module", call[1], self.inputs(call[2])
            return "get_attr", attr, ()
        item = _GETITEM_RE.match(rhs)
        if item is not None and item[1] in self.names:
            return "call_function", "operator.getitem", self.inputs(rhs)
        method = _METHOD_RE.match(rhs)
        if method is not None and method[1] in self.names:
            return "call_method", method[2], self.inputs(rhs)
        infix = _BINARY_RE.match(rhs)
        unary = _UNARY_RE.match(rhs) if infix is None else None
        if infix is not None or unary is not None:
            name_ = _BINARY[infix[2]] if infix is not None else _UNARY[unary[1]]  # type: ignore[index]
            return "call_function", f"operator.{name_}", self.inputs(rhs)
        call = _CALL_RE.match(rhs)
        target = _target(call[1]) if call is not None else rhs[:80]
        return "call_function", target, self.inputs(call[2] if call is not None else rhs)


_TYPES_CACHE: dict[str, tuple[tuple[TensorInfo, ...], str | None]] = {}


def _types(annotation: str | None) -> tuple[tuple[TensorInfo, ...], str | None]:
    if not annotation:
        return (), None
    cached = _TYPES_CACHE.get(annotation)
    if cached is not None:
        return cached
    info = tensor_info(annotation)
    out: tuple[tuple[TensorInfo, ...], str | None] = ((info,), None) if info is not None else ((), annotation.rsplit(".", 1)[-1][:80])
    if len(_TYPES_CACHE) < 100_000:  # TensorInfo is immutable: one value per distinct type text
        _TYPES_CACHE[annotation] = out
    return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def parse_graph_text(
    lines: Sequence[str],
    header: Graph,
    *,
    stacks: StackTable,
    max_nodes: int = MAX_NODES_PER_GRAPH,
    keep_code: bool = True,
) -> Graph:
    """Parse ``print_readable`` graph text (one line per item) into a :class:`Graph`.

    Args:
        lines: the text's lines (a TORCH_TRACE payload).
        header: the graph without its nodes: its id, level and the compile that made it.
        stacks: the Report's stack table (``# File:`` locations are interned there).
        max_nodes: nodes kept; the rest are counted in ``op_count`` and ``truncated`` is set.
        keep_code: keep the text as :attr:`Graph.code` (when under :data:`MAX_CODE_CHARS`).

    Returns:
        The graph. A text without a ``forward`` gives a graph with no nodes.
    """
    b = _Builder(stacks, max_nodes)
    i = _forward_line(lines)
    if i is not None:
        body_indent = _indent(lines[i]) + 4
        params, i = _forward_params(lines, i)
        _parse_params(b, params)
        _parse_body(b, lines, i, body_indent)
    code = "\n".join(lines) if keep_code and sum(len(x) + 1 for x in lines) <= MAX_CODE_CHARS else None
    return dataclasses.replace(header, nodes=tuple(b.nodes), code=code, op_count=b.op_count, truncated=b.truncated)


def _forward_line(lines: Sequence[str]) -> int | None:
    """The index of the top-level ``def forward(`` (at the smallest indentation), or None."""
    for i, line in enumerate(lines):
        if line.lstrip().startswith("def forward(") and _indent(line) <= 4:
            return i
    return None


def _forward_params(lines: Sequence[str], i: int) -> tuple[list[str], int]:
    """The parameter text of the ``def forward(`` at line ``i`` (one piece per line), and the line after it."""
    n = len(lines)
    header = lines[i].strip()[len("def forward(") :]
    if header.endswith("):"):
        return [header[:-2]], i + 1
    params = [header]
    i += 1
    while i < n:
        stripped = lines[i].strip()
        i += 1
        if stripped.startswith("):") or stripped == ")":
            break
        params.append(stripped.split("  #", 1)[0])
    return params, i


def _parse_body(b: _Builder, lines: Sequence[str], i: int, body_indent: int) -> None:
    """Feed the statements and ``# File:`` comments of the body from line ``i`` on to ``b``."""
    n = len(lines)
    pending: list[str] = []
    while i < n:
        line = lines[i]
        i += 1
        stripped = line.strip()
        if not stripped:
            continue
        ind = _indent(line)
        if ind < body_indent:
            break
        if ind > body_indent:  # continuation of a multi-line statement
            if pending:
                pending.append(stripped.split("  #", 1)[0])
            continue
        if pending:
            b.statement(" ".join(pending))
            pending = []
        if stripped[0] == "#":
            if stripped.startswith("# File:"):
                b.location(stripped)
            elif stripped.startswith("# No stacktrace"):
                b.stack = None
            continue
        pending = [stripped]
    if pending:
        b.statement(" ".join(pending))


def _parse_params(b: _Builder, params: list[str]) -> None:
    text = " ".join(params)
    typed = _PARAM_RE.findall(text)
    if typed:
        for name, annotation in typed:
            if name != "self":
                b.placeholder(name, annotation)
        return
    for m in _BARE_PARAM_RE.finditer(text):
        if m[1] != "self":
            b.placeholder(m[1], None)


__all__ = ["MAX_CODE_CHARS", "parse_graph_text", "tensor_info"]
