"""Parameter and buffer names on graph placeholders (``blocks.0.proj.weight``).

Dynamo lifts a module's parameters and buffers into graph inputs named after their source:
``L_self_modules_blocks_modules_0_modules_proj_parameters_weight_`` is
``self.blocks[0].proj.weight``. AOTAutograd's ATen graph of the same compile takes the Dynamo
graph's inputs in the same order (``primals_1``..., ``arg0_1``...), so its placeholders get the
same names by position, when the two graphs have as many inputs (otherwise none: no guessing).
A backward graph's placeholders that are saved forward inputs keep the forward's names
(``primals_1``) and take the same parameter.
"""

from __future__ import annotations

import dataclasses
import re

from nstviz.report.model import Graph, Node, Run

_LIFTED = re.compile(r"^[LG]_(?P<path>.+?)_?$")
_KIND = re.compile(r"_(modules|parameters|buffers)_")
_ATEN_INPUTS = ("aten_forward", "aten_inference")


def param_name(target: str) -> str | None:
    """The dotted parameter/buffer name a lifted Dynamo input stands for, else None.

    ``L_self_modules_blocks_modules_0_modules_proj_parameters_weight_`` -> ``blocks.0.proj.weight``;
    a root other than ``self`` is kept (``L_model_parameters_w_`` -> ``model.w``).
    """
    m = _LIFTED.match(target)
    if m is None:
        return None
    parts = _KIND.split(m["path"])
    # parts: root, kind, name, kind, name, ...; a parameter or buffer must come last
    if len(parts) < 3 or parts[-2] not in ("parameters", "buffers") or "parameters" in parts[1:-2:2]:
        return None
    root, names = parts[0], parts[2::2]
    if root.startswith("stack") or not all(names):  # a resume function's local: whose module is unknown
        return None
    return ".".join(names if root == "self" else [root, *names])


def name_placeholders(run: Run) -> Run:
    """``run`` with :attr:`Node.param` set on the placeholders that stand for a parameter or buffer."""
    dynamo: dict[str, list[str | None]] = {}
    for g in run.graphs:
        if g.level == "dynamo":
            dynamo[g.id.rsplit(":", 1)[0]] = [param_name(n.target) for n in g.nodes if n.op == "placeholder"]
    if not any(any(names) for names in dynamo.values()):
        return run
    graphs = []
    forward: dict[str, dict[str, str]] = {}  # prefix -> forward placeholder name -> param
    for g in run.graphs:
        prefix = g.id.rsplit(":", 1)[0]
        names = dynamo.get(prefix)
        if names is None or not any(names) or (g.level != "dynamo" and g.level not in _ATEN_INPUTS):
            graphs.append(g)
            continue
        g = _named(g, names)
        if g.level == "aten_forward":
            forward[prefix] = {n.name: n.param for n in g.nodes if n.op == "placeholder" and n.param}
        graphs.append(g)
    # backward graphs take saved forward inputs under the forward's names (primals_3)
    for k, g in enumerate(graphs):
        saved = forward.get(g.id.rsplit(":", 1)[0]) if g.level == "aten_backward" else None
        if saved and any(n.op == "placeholder" and n.name in saved for n in g.nodes):
            nodes = tuple(
                dataclasses.replace(n, param=saved[n.name]) if n.op == "placeholder" and n.name in saved else n
                for n in g.nodes
            )
            graphs[k] = dataclasses.replace(g, nodes=nodes)
    return dataclasses.replace(run, graphs=tuple(graphs))


def _named(graph: Graph, names: list[str | None]) -> Graph:
    placeholders = [i for i, n in enumerate(graph.nodes) if n.op == "placeholder"]
    if len(placeholders) != len(names):  # tokens, subclasses, truncation: the positions do not line up
        return graph
    nodes: list[Node] = list(graph.nodes)
    for i, name in zip(placeholders, names, strict=True):
        if name is not None and nodes[i].param != name:
            nodes[i] = dataclasses.replace(nodes[i], param=name)
    return dataclasses.replace(graph, nodes=tuple(nodes))


__all__ = ["name_placeholders", "param_name"]
