"""A branch on a buffer's elements reads the buffer once, as Python numbers (EoMT's mask annealing)."""

from __future__ import annotations

import inspect

import torch

from nstviz.advisor.code import rewrite_lines
from nstviz.advisor.rewrites import BreakSite, input_variants, propose, verify
from nstviz.advisor.rewrites.buffer_reads import propose_buffer_reads, registered_buffers
from tests.rewrites import toys_buffer_reads as T
from tests.rewrites._paste import graphs_in_fresh_process


def _site(fn, text: str) -> BreakSite:
    lines, first = inspect.getsourcelines(fn)
    return BreakSite("GB0170", first + next(i for i, line in enumerate(lines) if text in line), "Data-dependent branching")


def test_the_buffer_is_read_once_and_the_loop_compiles_whole():
    model = T.Annealed().eval()
    sets = input_variants((torch.randn(2, 8),))
    p = propose(T.Annealed.forward, _site(T.Annealed.forward, "self.probs[idx] > 0)"))
    rw = [r for r in p.rewrites if r.remedy == "buffer-read"]
    assert len(rw) == 1, p.notes
    src = rw[0].source
    assert "_nstviz_probs = self.probs.tolist()" in src and "_nstviz_probs[idx] > 0" in src
    assert "self._mask(x, prob=_nstviz_probs[idx])" in src  # the element passed on is a number too
    code = T.Annealed.forward.__code__
    with torch.no_grad():
        v = verify(T.Annealed.forward, rw[0], sets, entry=model)
    assert v.kept and v.graphs_after == 1 and v.graphs_before > 1 and all(v.outputs_match), v
    assert T.Annealed.forward.__code__ is code  # nothing stays patched
    model.probs[2] = 0.5  # the schedule moves on: the values read are the new ones
    with torch.no_grad():
        v = verify(T.Annealed.forward, rw[0], sets, entry=model)
    assert v.kept and all(v.outputs_match), v


def test_the_pasted_rewrite_counts_one_graph_in_a_fresh_process():
    rw = propose_buffer_reads(T.Annealed.forward, _site(T.Annealed.forward, "self.probs[idx] > 0)")).rewrites[0]
    imports: dict[str, None] = {}
    lines = rewrite_lines(rw, imports)  # fills imports
    paste = "\n".join([*imports, *lines])
    assert "toys_buffer_reads.Annealed.forward.__code__ = forward.__code__" in paste, paste
    call = "Annealed().eval(), (torch.randn(2, 8),)"
    setup = "from tests.rewrites.toys_buffer_reads import Annealed\n"
    before = graphs_in_fresh_process([], "", call, setup=setup)
    after = graphs_in_fresh_process([], paste, call, setup=setup)
    assert before > 1 and after == 1, (before, after)


def test_in_training_the_helper_that_branches_on_the_element_passed_gets_a_number():
    model = T.Annealed().train()
    sets = input_variants((torch.randn(2, 8),))
    # `self.training or ...` short-circuits: the break is the helper's `if prob < 1`, on a parameter
    p = propose(T.Annealed._mask, _site(T.Annealed._mask, "if prob < 1"))
    rw = [r for r in p.rewrites if r.remedy == "buffer-read"]
    assert len(rw) == 1 and rw[0].original is T.Annealed.forward, p.notes  # the caller is rewritten
    v = verify(T.Annealed.forward, rw[0], sets, entry=model)
    assert v.kept and v.graphs_after == 1 and v.graphs_before > 1 and all(v.outputs_match), v


def test_a_buffer_a_method_writes_is_not_read_once():
    assert registered_buffers(T.Written) == {"probs"}
    p = propose_buffer_reads(T.Written.forward, _site(T.Written.forward, "if self.probs[idx] > 0"))
    assert p.rewrites == [] and p.notes == ["`self.probs` is written in Written.forward: not read once"], p.notes
