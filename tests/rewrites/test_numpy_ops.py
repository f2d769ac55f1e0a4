"""Remedy: a numpy function returning an ndarray (a random mask) runs as a custom op returning a tensor (real compiles)."""

from __future__ import annotations

import numpy as np
import torch

from nstviz.advisor.rewrites import BreakSite, propose, propose_numpy_op, recorded_calls, verify
from tests.rewrites._paste import graphs_in_fresh_process

GB0033 = BreakSite(gb_id="GB0033", message="Data dependent operator")


def span_mask(shape, prob, length, attention_mask=None, min_masks=0):
    """SpecAugment's ``_compute_mask_indices`` in small: spans drawn with numpy's generator, an ndarray out."""
    batch, seq = shape
    eps = np.random.rand(1).item()
    n = max(int(prob * seq / length + eps), min_masks)
    mask = np.zeros((batch, seq), dtype=bool)
    for b in range(batch):
        for s in np.random.choice(np.arange(seq - length + 1), n, replace=False):
            mask[b, s:s + length] = True
    return mask


def spec_augment(features):
    """Its caller: the mask made a tensor, then applied."""
    b, t, _ = features.shape
    m = torch.tensor(span_mask((b, t), 0.3, 2), device=features.device, dtype=torch.bool)
    return features.masked_fill(m[:, :, None], 0.0).tanh()


def counts(x):
    """numpy that returns a Python int, not an ndarray: not this remedy's."""
    return int(np.random.randint(0, 3)) + x.shape[0]


def _sets():
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(2, 12, 4, generator=g),), (torch.randn(3, 12, 4, generator=g),)]


def _calls(fn, entry, sets):
    with recorded_calls(fn) as calls:
        for s in sets:
            entry(*s)
    return calls


def test_the_mask_function_runs_as_an_op_with_the_same_masks_and_one_graph():
    sets = _sets()
    p = propose(span_mask, GB0033, _calls(span_mask, spec_augment, sets))
    r = next(r for r in p.rewrites if r.remedy == "numpy-op")
    assert ("def _span_mask_op(shape: list[int], prob: float, length: int, attention_mask: torch.Tensor | None, "
            "min_masks: int) -> torch.Tensor:") in r.source
    assert "return torch.empty((shape[0], shape[1], ), dtype=torch.bool)" in r.source  # the fake, sizes from `shape`
    assert "def span_mask(shape, prob, length, attention_mask=None, min_masks=0):" in r.source
    v = verify(span_mask, r, sets, entry=spec_augment)
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 2, 1, [True, True]), v


def test_compiled_draws_the_eager_masks_from_numpys_generator_and_nothing_stays_registered():
    sets = _sets()
    r = propose_numpy_op(span_mask, GB0033, _calls(span_mask, spec_augment, sets)).rewrites[0]
    with r.applied():
        torch._dynamo.reset()
        compiled = torch.compile(spec_augment, backend="aot_eager")
        for (x,) in sets:
            np.random.seed(3)
            want = spec_augment(x)
            np.random.seed(3)
            assert torch.equal(compiled(x), want)
    assert not hasattr(torch.ops.nstviz_fix, "span_mask")
    assert isinstance(span_mask((2, 6), 0.3, 2), np.ndarray)  # the original is back


def test_a_function_that_does_not_return_an_ndarray_is_not_this_remedys():
    calls = _calls(counts, counts, [(torch.zeros(2),), (torch.zeros(3),)])
    p = propose_numpy_op(counts, GB0033, calls)
    assert p.rewrites == [] and not p.fits


def test_paste_in_a_fresh_process():
    sets = _sets()
    r = propose_numpy_op(span_mask, GB0033, _calls(span_mask, spec_augment, sets)).rewrites[0]
    call = "spec_augment, (torch.randn(2, 12, 4),)"
    assert graphs_in_fresh_process([span_mask, spec_augment], "", call) == 2
    assert graphs_in_fresh_process([span_mask, spec_augment], r.source, call) == 1


def test_the_advisor_keeps_it_against_eager_where_the_baseline_compile_draws_other_masks():
    """The baseline compile traces numpy onto torch's generator (other masks than eager): the attempt is checked against eager."""
    import nstviz

    report = nstviz.compare(spec_augment, torch.randn(2, 12, 4, generator=torch.Generator().manual_seed(0)), auto=True)
    op = next(c for c in report.candidates if "(numpy-op)" in c.function)
    assert (op.status, op.outputs_match) == ("improved", True), op.error  # "worse: outputs differ" against the baseline
    rec = report.recommendation  # this op, or capture_scalar_outputs (Dynamo then skips span_mask: eager's draws)
    assert rec is not None and (rec.graphs_before, rec.graphs_after, rec.outputs_match) == (2, 1, True)
