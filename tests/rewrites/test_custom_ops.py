"""Remedy 4 on real toys: a function with untraceable C/builtin calls runs as a torch.library.custom_op."""

from __future__ import annotations

import pytest
import torch

from nstviz.advisor.rewrites import (
    BreakSite,
    input_variants,
    propose,
    propose_custom_op,
    recorded_calls,
    verify,
)
from tests.rewrites import toys
from tests.rewrites._paste import graphs_in_fresh_process


def _observed(model, fn, sets):
    with recorded_calls(fn) as calls:
        for s in sets:
            model(*s)
    return calls


def test_custom_op_lowers_graphs_and_matches_eager():
    sets = input_variants((torch.randn(4, 6),))
    calls = _observed(toys.quantized_error, toys.floor_bins, sets)
    assert len(calls) == 3 and toys.floor_bins.__name__ == "floor_bins" and toys.quantized_error(*sets[0]) is not None
    p = propose(toys.floor_bins, BreakSite("GB0000", message="Tensor.tolist() with non-integer tensor"), calls)
    ops = [r for r in p.rewrites if r.remedy == "custom-op"]
    assert len(ops) == 1
    r = ops[0]
    assert '@torch.library.custom_op("nstviz_fix::floor_bins", mutates_args=())' in r.source
    assert "torch.empty((x.shape[0], x.shape[1], ), dtype=torch.float32, device=x.device)" in r.source
    v = verify(toys.quantized_error, r, sets, entry=toys.quantized_error)
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 4, 1, [True, True, True]), v
    assert toys.floor_bins is r.original


def test_paste_ready_custom_op_in_a_fresh_process():
    sets = input_variants((torch.randn(4, 6),))
    r = propose_custom_op(toys.floor_bins, None, _observed(toys.quantized_error, toys.floor_bins, sets)).rewrites[0]
    call = "quantized_error, (torch.randn(4, 6),)"
    defs = [toys.floor_bins, toys.quantized_error]
    assert graphs_in_fresh_process(defs, "", call) == 4
    assert graphs_in_fresh_process(defs, r.source, call) == 1


def test_value_dependent_output_shape_is_refused():
    sets = [(torch.tensor([0.1, 0.2, 3.0]),), (torch.tensor([1.0, 2.0, 3.0]),)]
    calls = _observed(toys.unique_plus_one, toys.rounded_unique, sets)
    p = propose_custom_op(toys.rounded_unique, None, calls)
    assert p.rewrites == [] and "depend on the input values" in p.notes[0]


def test_one_observed_call_is_not_enough():
    p = propose_custom_op(toys.floor_bins, None, [(torch.randn(2, 2),)])
    assert p.rewrites == [] and "two or more" in p.notes[0]


def test_recording_and_rewrite_restored_on_errors():
    with pytest.raises(ValueError), recorded_calls(toys.floor_bins):
        assert toys.floor_bins.__name__ == "floor_bins"
        raise ValueError
    original = toys.floor_bins
    sets = input_variants((torch.randn(2, 3),))
    r = propose_custom_op(original, None, _observed(toys.quantized_error, original, sets)).rewrites[0]
    with pytest.raises(ValueError), r.applied():
        assert toys.floor_bins is r.function
        raise ValueError
    assert toys.floor_bins is original
