"""Constant 0-d int buffers read as Python ints (EnCodec's padding): toys and the real tiny EnCodec."""

from __future__ import annotations

import pytest
import torch

from nstviz.advisor.rewrites import BreakSite, choose, graph_count, input_variants, propose, verify
from nstviz.advisor.rewrites.buffers import GroupRewrite, constant_buffers, propose_buffer_ints
from tests.rewrites import toys_buffers as T
from tests.rewrites._paste import graphs_in_fresh_process

GB0170 = BreakSite("GB0170", None, "Data-dependent branching")


def test_buffers_traced_to_the_attributes_they_are_built_from():
    import ast

    found = {k: ast.unparse(v) for k, v in constant_buffers(T.PadConv).items()}
    assert found == {
        "stride": "self.conv.stride[0]",
        "kernel_size": "self.conv.kernel_size[0]",
        "padding_total": "self.conv.kernel_size[0] - self.conv.stride[0]",
    }


def test_toy_two_layers_of_different_sizes():
    model = T.pad_convs()
    x = torch.randn(1, 2, 9)
    sets = input_variants((x,))
    p = propose(T.PadConv.pad, GB0170)  # the break is in the static helper; its class's methods are rewritten
    rw = [r for r in p.rewrites if r.remedy == "buffer-int"]
    assert len(rw) == 1 and isinstance(rw[0], GroupRewrite)
    assert "    n_frames = int(math.ceil(n_frames)) - 1\n" in rw[0].source
    assert rw[0].source.rstrip().endswith("PadConv.extra_padding = extra_padding\nPadConv.forward = forward")
    forward, extra = T.PadConv.__dict__["forward"], T.PadConv.__dict__["extra_padding"]
    codes = forward.__code__, extra.__code__
    with torch.no_grad():
        v = verify(T.PadConv.pad, rw[0], sets, entry=model)
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 8, 1, [True, True, True]), v
    assert T.PadConv.__dict__["forward"] is forward and T.PadConv.__dict__["extra_padding"] is extra
    assert (forward.__code__, extra.__code__) == codes


def test_toy_restored_when_the_block_raises():
    def state():
        return {k: (T.PadConv.__dict__[k], T.PadConv.__dict__[k].__code__) for k in ("forward", "extra_padding")}

    before = state()
    r = propose_buffer_ints(T.PadConv.pad, GB0170).rewrites[0]
    with pytest.raises(RuntimeError, match="boom"), r.applied():
        # forward reads nothing new: its code is swapped; extra_padding needs `math`: the class attribute is
        now = state()
        assert now["forward"][1] is not before["forward"][1] and now["extra_padding"][0] is not before["extra_padding"][0]
        raise RuntimeError("boom")
    assert state() == before


@pytest.mark.parametrize(("cls", "note"), [
    (T.PersistentPad, "no non-persistent 0-d int buffer"),
    (T.CountingPad, "CountingPad.steps: written in forward; not a constant"),
    (T.ScaledPad, "`x * self.k` uses a buffer as a tensor; not rewritten"),
])
def test_not_constant_or_not_a_size_is_not_rewritten(cls, note):
    p = propose_buffer_ints(cls.forward, GB0170)
    assert p.rewrites == [] and any(note in n for n in p.notes), p.notes


def test_module_level_function_has_no_buffers():
    p = propose_buffer_ints(T.encodec, GB0170)
    assert p.rewrites == [] and "not a method of a class" in p.notes[0]


def test_toy_paste_in_a_fresh_process():
    r = propose_buffer_ints(T.PadConv.pad, GB0170).rewrites[0]
    setup = "from tests.rewrites.toys_buffers import pad_convs\n"
    call = "pad_convs(), (torch.randn(1, 2, 9),)"
    assert graphs_in_fresh_process([], "", call, setup) == 8
    assert graphs_in_fresh_process([], r.source, call, setup) == 1


def test_encodec_real_model():
    """tiny EnCodec (transformers 5.24), eval, no_grad, decoded audio: measured on torch 2.13 and 2.14.1.

    Before: 33 graphs (explain lists 16 breaks: 13 at `_pad1d`'s `if length <= max_pad`, GB0170 and
    generic_jump; 2 at its slice, 1 .item()-like data-dependent op; EncodecConv1d.forward also hits the
    recompile limit on its weight-norm conv's type). The buffers as ints: 24 graphs, the 3 breaks left
    are the LSTM (GB0014: "Attempted to wrap RNN, GRU, or LSTM"), in encoder and decoder. With
    allow_rnn as well: 1 graph, 0 breaks. allow_rnn alone does not help (33 -> 34).
    """
    from transformers.models.encodec import modeling_encodec as E

    model = T.encodec()
    x = torch.randn(1, 1, 1600)

    def entry(input_values):
        return model(input_values=input_values).audio_values

    originals = {k: (E.EncodecConv1d.__dict__[k], E.EncodecConv1d.__dict__[k].__code__)
                 for k in ("forward", "_get_extra_padding_for_conv1d")}
    with torch.no_grad():
        entry(x)
        before = graph_count(entry, (x,))
        assert before == 33
        p = propose(E.EncodecConv1d._pad1d, BreakSite("GB0170", 150, "Data-dependent branching"))
        rw = [r for r in p.rewrites if r.remedy == "buffer-int"]
        assert [r.config for r in rw] == [{}, {"allow_rnn": True}]
        # the count as written is given (choose counting it itself: tests/rewrites/test_routers.py)
        best, verdicts = choose(E.EncodecConv1d._pad1d, rw, input_variants((x,))[:2], entry=entry, before=before)
    assert [(v.kept, v.graphs_before, v.graphs_after, v.outputs_match) for v in verdicts] == [
        (True, 33, 24, [True, True]), (True, 33, 1, [True, True])]
    assert best is rw[1]
    assert "`self.stride` -> `self.conv.stride[0]`" in best.description
    assert {k: (E.EncodecConv1d.__dict__[k], E.EncodecConv1d.__dict__[k].__code__) for k in originals} == originals
    # pasted in a fresh process (no_grad, one eager call first): 33 -> 1 graphs
    setup = "from tests.rewrites.toys_buffers import encodec_call\n"
    assert graphs_in_fresh_process([], best.source, "encodec_call()", setup) == 1


def test_a_name_made_a_tensor_again_is_not_rewritten():
    """``n += tensor`` makes ``n`` a tensor: ``torch.ceil(n) * self.stride`` is tensor arithmetic, left alone."""
    p = propose_buffer_ints(T.AugmentedPad.extra_padding, GB0170)
    assert any("AugmentedPad.extra_padding: `torch.ceil(n).to(torch.int64) * self.stride` uses a buffer as a tensor"
               in n for n in p.notes), p.notes
    src = p.rewrites[0].source  # the inherited forward still reads padding_total as an int
    assert "def extra_padding" not in src and "math.ceil" not in src
    assert src.rstrip().endswith("AugmentedPad.forward = forward")
