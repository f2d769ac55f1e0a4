"""numpy on Python numbers -> math, in the breaking function's helper (Reformer's chunk-length pattern)."""

from __future__ import annotations

import inspect

import torch

from nstviz.advisor.rewrites import BreakSite, graph_count, propose, propose_numpy_scalars, verify
from tests.rewrites import toys
from tests.rewrites._paste import graphs_in_fresh_process

NUMPY_JUMP = "generic_jump NumpyNdarrayVariable()"


def _break_line():
    lines, first = inspect.getsourcelines(toys.pad_to_chunks)
    return first + next(i for i, line in enumerate(lines) if "must_pad =" in line)


def test_helper_rewritten_to_math_lowers_graphs():
    sets = [(torch.randn(2, 10),), (torch.randn(2, 12),), (torch.randn(2, 2),)]
    p = propose(toys.pad_to_chunks, BreakSite(None, _break_line(), NUMPY_JUMP))
    assert [(r.remedy, r.original) for r in p.rewrites] == [("numpy-to-math", toys.chunk_multiple)]
    r = p.rewrites[0]
    assert "    return math.lcm(sizes[0], sizes[1])\n" in r.source
    v = verify(toys.pad_to_chunks, r, sets, entry=toys.pad_to_chunks)
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 3, 1, [True, True, True]), v
    assert "np" in toys.chunk_multiple.__code__.co_names


def test_paste_ready_helper_in_a_fresh_process():
    r = propose_numpy_scalars(toys.pad_to_chunks, BreakSite(None, _break_line(), NUMPY_JUMP)).rewrites[0]
    defs = [toys.chunk_multiple, toys.pad_to_chunks]
    call = "pad_to_chunks, (torch.randn(2, 10),)"
    assert graphs_in_fresh_process(defs, "", call) == 3
    assert graphs_in_fresh_process(defs, r.source, call) == 1


def test_numpy_on_tensors_is_not_kept():
    src = "def np_sqrt(x):\n    return torch.from_numpy(np.sqrt(x.numpy())) + 1\n"
    import linecache

    import numpy as np

    linecache.cache["<np_sqrt>"] = (len(src), None, src.splitlines(True), "<np_sqrt>")
    ns: dict = {"torch": torch, "np": np}
    exec(compile(src, "<np_sqrt>", "exec"), ns)
    fn = ns["np_sqrt"]
    r = propose_numpy_scalars(fn, BreakSite()).rewrites[0]
    v = verify(fn, r, [(torch.rand(3),), (torch.rand(3) + 1,)])
    assert not v.kept and graph_count(fn, (torch.rand(3),)) == 1  # numpy on arrays traces already
