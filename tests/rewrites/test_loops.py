"""Remedy 3 on real toys: ``torch.stack([... for r in t])`` becomes tensor ops where the rule is sure."""

from __future__ import annotations

import pytest
import torch

from nstviz.advisor.rewrites import BreakSite, graph_count, input_variants, propose, propose_loop, verify
from tests.rewrites import toys
from tests.rewrites._paste import graphs_in_fresh_process


def test_conditional_rows_become_vmap_with_where():
    sets = input_variants((torch.randn(4, 6),))
    p = propose_loop(toys.flip_rows, BreakSite("GB0170", message="Data-dependent branching"))
    assert [r.remedy for r in p.rewrites] == ["loop-vmap"]
    r = p.rewrites[0]
    assert "torch.vmap(lambda r: torch.where(r.sum() > 0, r, -r))(t)" in r.source
    v = verify(toys.flip_rows, r, sets)
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 2, 1, [True, True, True]), v
    assert graphs_in_fresh_process([toys.flip_rows], r.source, "flip_rows, (torch.randn(4, 6),)") == 1


def test_elementwise_rows_vectorised_but_not_kept_without_fewer_graphs():
    p = propose_loop(toys.affine_rows, BreakSite())
    assert [r.remedy for r in p.rewrites] == ["loop-vectorise"]
    assert "    y = t * 2 + 1\n" in p.rewrites[0].source
    v = verify(toys.affine_rows, p.rewrites[0], input_variants((torch.randn(4, 6),)))
    # the loop does not break on torch 2.13 (Dynamo unrolls it): equal outputs, but 1 -> 1 graphs
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (False, 1, 1, [True, True, True])


def test_non_elementwise_body_is_not_vectorised_directly():
    src = "def row_sums(t):\n    return torch.stack([r.sum() * 2 for r in t])\n"
    import linecache

    linecache.cache["<row_sums>"] = (len(src), None, src.splitlines(True), "<row_sums>")
    ns: dict = {"torch": torch}
    exec(compile(src, "<row_sums>", "exec"), ns)
    p = propose_loop(ns["row_sums"], BreakSite())
    assert [r.remedy for r in p.rewrites] == ["loop-vmap"]  # a plain `t.sum() * 2` would be wrong
    x = torch.randn(4, 6)
    torch.testing.assert_close(p.rewrites[0].function(x), ns["row_sums"](x))


def test_body_calling_an_unknown_function_is_not_rewritten():
    p = propose_loop(toys.rows_through_helper, BreakSite())
    assert p.rewrites == [] and "not side-effect free" in p.notes[0]


def test_iteration_break_offers_unbind():
    p = propose_loop(toys.affine_rows, BreakSite("GB4347", message="Missing tp_iternext"))
    unbind = [r for r in p.rewrites if r.remedy == "loop-unbind"]
    assert len(unbind) == 1 and "for r in t.unbind(0)" in unbind[0].source
    x = torch.randn(4, 6)
    torch.testing.assert_close(unbind[0].function(x), toys.affine_rows(x))


def test_restored_when_the_body_raises():
    r = propose_loop(toys.flip_rows, BreakSite()).rewrites[0]
    with pytest.raises(ZeroDivisionError), r.applied():
        assert toys.flip_rows is r.function or "vmap" in toys.flip_rows.__code__.co_names
        _ = 1 / 0
    assert "vmap" not in toys.flip_rows.__code__.co_names and toys.flip_rows is r.original


def test_append_loop_skipped_by_dynamo_now_compiles_whole():
    sets = input_variants((torch.randn(4, 6),))
    # the break inside the for loop makes Dynamo skip the frame: explain sees no graph at all
    assert graph_count(toys.flip_rows_loop, sets[0]) == 0
    p = propose(toys.flip_rows_loop, BreakSite("GB0170", message="Data-dependent branching"))
    assert [r.remedy for r in p.rewrites] == ["branch-where", "loop-vmap"]
    loop = p.rewrites[1]
    assert "    y = torch.vmap(lambda r: torch.where(r.sum() > 0, r, -r))(t)\n" in loop.source
    assert "for r in t" not in loop.source
    verdicts = [verify(toys.flip_rows_loop, r, sets) for r in p.rewrites]
    # the where-rewrite keeps the loop: it compiles, the loop unrolled, into one graph as well
    assert [(v.kept, v.graphs_before, v.graphs_after) for v in verdicts] == [(True, 0, 1), (True, 0, 1)]
