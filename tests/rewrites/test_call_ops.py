"""Remedy: a call Dynamo cannot follow inside a function becomes a custom op (real compiles, explain).

The kind: a Hungarian matcher (DETR, MaskFormer, Mask2Former) takes dicts, returns index pairs, and
calls scipy's ``linear_sum_assignment`` on a CPU cost matrix (GB0007: a function of a skipped module).
"""

from __future__ import annotations

import decimal
import inspect

import numpy as np
import pytest
import torch

from nstviz.advisor.rewrites import BreakSite, propose, propose_call_op, recorded_calls, verify
from tests.rewrites._paste import graphs_in_fresh_process

scipy_optimize = pytest.importorskip("scipy.optimize")
linear_sum_assignment = scipy_optimize.linear_sum_assignment


@torch.no_grad()
def match(outputs, targets):
    """Dicts in, a list of (query index, target index) pairs out, like transformers' HungarianMatcher."""
    logits, boxes = outputs["logits"], outputs["boxes"]
    cost = torch.cdist(boxes.flatten(0, 1), torch.cat([t["boxes"] for t in targets]), p=1)
    cost = cost - logits.flatten(0, 1).softmax(-1)[:, torch.cat([t["labels"] for t in targets])]
    cost = cost.view(boxes.shape[0], boxes.shape[1], -1).cpu()
    sizes = [len(t["boxes"]) for t in targets]
    indices = [linear_sum_assignment(c[i]) for i, c in enumerate(cost.split(sizes, -1))]
    return [(torch.as_tensor(i, dtype=torch.int64), torch.as_tensor(j, dtype=torch.int64)) for i, j in indices]


def loss(logits, boxes, targets):
    logits, boxes = logits * 2, boxes.sigmoid()
    pairs = match({"logits": logits, "boxes": boxes}, targets)
    picked = torch.cat([boxes[b, i] for b, (i, _) in enumerate(pairs)])
    wanted = torch.cat([t["boxes"][j] for t, (_, j) in zip(targets, pairs, strict=True)])
    return (picked - wanted).abs().mean() + logits.sum() * 0


def _inputs(seed, queries=5, classes=3, counts=(2, 3)):
    g = torch.Generator().manual_seed(seed)
    targets = [{"boxes": torch.rand(n, 4, generator=g), "labels": torch.randint(0, classes, (n,), generator=g)}
               for n in counts]
    return torch.randn(len(counts), queries, classes, generator=g), torch.rand(len(counts), queries, 4, generator=g), targets


SETS = [_inputs(0), _inputs(1)]
GB0007 = BreakSite("GB0007", inspect.getsourcelines(match)[1] + 8,
                   "Attempted to call function marked as skipped module: scipy.optimize._lsap, qualname: "
                   "linear_sum_assignment, skip reason: ...")


def _calls():
    with recorded_calls(match) as calls:
        for s in SETS:
            loss(*s)
    return calls


def test_the_call_becomes_an_op_whose_fake_sizes_come_from_the_cost_matrix():
    p = propose_call_op(match, GB0007, _calls())
    assert [r.remedy for r in p.rewrites] == ["call-op"], p.notes
    src = p.rewrites[0].source
    assert "torch.ops.nstviz_fix.linear_sum_assignment(c[i])" in src
    assert "from scipy.optimize._lsap import linear_sum_assignment as _nstviz_linear_sum_assignment" in src
    # each image's pairs: as many as its targets (the cost matrix's columns), int64, on the CPU
    assert "torch.empty((a0.shape[1], ), dtype=torch.int64, device='cpu')" in src
    assert "@torch.no_grad()" in src
    v = verify(match, p.rewrites[0], SETS, entry=loss)
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 2, 1, [True, True]), v
    assert not hasattr(torch.ops.nstviz_fix, "linear_sum_assignment_1")  # nothing left registered


def test_the_whole_function_gets_no_op_but_the_call_does():
    p = propose(match, GB0007, _calls())
    assert [r.remedy for r in p.rewrites] == ["call-op"]
    assert any("argument outputs is a dict" in n for n in p.notes)  # custom-op's reason: a dict is no op input


def test_a_fake_that_does_not_hold_raises_instead_of_a_wrong_shape():
    r = propose_call_op(match, GB0007, _calls()).rewrites[0]
    more_targets = _inputs(2, queries=2, counts=(3, 3))  # 3 targets, 2 queries: 2 pairs, not 3
    with r.applied(), pytest.raises(RuntimeError, match="the fake does not hold here"):
        loss(*more_targets)


def test_paste_in_a_fresh_process():
    r = propose_call_op(match, GB0007, _calls()).rewrites[0]
    setup = "from scipy.optimize import linear_sum_assignment\n"
    call = ("loss, (torch.randn(2, 5, 3), torch.rand(2, 5, 4), [{'boxes': torch.rand(n, 4), "
            "'labels': torch.randint(0, 3, (n,))} for n in (2, 3)])")
    assert graphs_in_fresh_process([match, loss], "", call, setup) == 2
    assert graphs_in_fresh_process([match, loss], r.source, call, setup) == 1


def test_pasted_into_its_module_the_decorated_functions_code_is_swapped_under_its_wrapper():
    from nstviz.advisor.code import rewrite_lines

    r = propose_call_op(match, GB0007, _calls()).rewrites[0]
    imports: dict[str, None] = {}
    lines = rewrite_lines(r, imports)
    assert lines[-2].startswith("test_call_ops.match.__wrapped__.__code__ = match.__code__")
    assert not any(line.lstrip().startswith("@torch.no_grad") for line in lines)  # pasted bare: only its code is swapped
    call = ("loss, (torch.randn(2, 5, 3), torch.rand(2, 5, 4), [{'boxes': torch.rand(n, 4), "
            "'labels': torch.randint(0, 3, (n,))} for n in (2, 3)])")
    paste = "\n".join([*imports, *lines])
    setup = "from tests.rewrites.test_call_ops import loss\n"
    assert graphs_in_fresh_process([], paste, call, setup) == 1


@torch.no_grad()
def match_prompted(outputs, targets, ids):
    """``match`` reading a prompt's ids first, as Grounding DINO's matcher reads its label map: random ids raise."""
    torch.nn.functional.one_hot(torch.diff(ids), 2)  # ids that rise by 0 or 1
    cost = torch.cdist(outputs["boxes"].flatten(0, 1), torch.cat([t["boxes"] for t in targets]), p=1)
    cost = cost.view(outputs["boxes"].shape[0], outputs["boxes"].shape[1], -1).cpu()
    sizes = [len(t["boxes"]) for t in targets]
    indices = [linear_sum_assignment(c[i]) for i, c in enumerate(cost.split(sizes, -1))]
    return [(torch.as_tensor(i, dtype=torch.int64), torch.as_tensor(j, dtype=torch.int64)) for i, j in indices]


def loss_with_a_prompt(logits, boxes, targets, ids):
    boxes = boxes.sigmoid()
    pairs = match_prompted({"logits": logits, "boxes": boxes}, targets, ids)
    picked = torch.cat([boxes[b, i] for b, (i, _) in enumerate(pairs)])
    wanted = torch.cat([t["boxes"][j] for t, (_, j) in zip(targets, pairs, strict=True)])
    return (picked - wanted).abs().mean() + logits.sum() * 0


def test_the_fake_is_built_from_the_calls_on_the_input_sets_the_code_itself_takes():
    # random token ids raise inside the matcher (as in Grounding DINO's): its calls on them are not
    # recorded, the op is built from the calls that returned and checked on the sets the code takes
    import nstviz

    ids = torch.tensor([0, 0, 1, 1, 2])
    report = nstviz.compare(loss_with_a_prompt, *_inputs(0), ids, auto=True, backend="eager", time=False)
    kept = [c.function for c in report.candidates if c.status == "improved"]
    assert kept == ["rewrite: match_prompted (call-op)"], report.candidates
    assert report.recommendation is not None and report.recommendation.graphs_after == 1
    # the graph count on another input set met the ids it raises on, inside the matcher's no_grad:
    # compiled code that raises there leaves grad mode off, and the check put it back
    assert torch.is_grad_enabled()


def batch_frexp(inputs, max_bit=31):
    """I-BERT's quantizer in small: numpy's frexp of the values, then a Python loop over the mantissas."""
    shape = inputs.size()
    inputs = inputs.view(-1)
    output_m, output_e = np.frexp(inputs.cpu().numpy())
    tmp_m = [int(decimal.Decimal(m * (2**max_bit)).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))
             for m in output_m]
    output_e = float(max_bit) - output_e
    return torch.from_numpy(np.array(tmp_m)).view(shape), torch.from_numpy(output_e).view(shape)


def scaled(x, scale):
    m, e = batch_frexp(scale * 2)
    return x * m / (2.0**e)


def test_a_function_that_loops_over_the_calls_outputs_gets_the_whole_function_op_first():
    # the call alone as an op would hand the loop tensors where Decimal needs numbers: the whole
    # function as an op is tried first (I-BERT: 44 -> 1 graphs that way; the call op did not compile)
    sets = [(torch.randn(3, 4), torch.rand(4, dtype=torch.float64) + 0.1 * k) for k in (1, 5)]  # I-BERT's are doubles
    with recorded_calls(batch_frexp) as calls:
        for s in sets:
            scaled(*s)
    line = inspect.getsourcelines(batch_frexp)[1] + 4
    brk = BreakSite("GB0294", line, "attempted to trace numpy function unsupported by PyTorch: numpy.frexp")
    p = propose(batch_frexp, brk, calls)
    assert [r.remedy for r in p.rewrites] == ["custom-op", "call-op"], p.notes
    assert p.rewrites[1].values_iterated and p.rewrites[0].stands_for == "call-op"  # tried as early
    v = verify(batch_frexp, p.rewrites[0], sets, entry=scaled)
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 5, 1, [True, True]), v
    assert propose(match, GB0007, _calls()).rewrites[0].remedy == "call-op"  # the matcher's pairs: no function op
    # pasted, the op's function keeps the original's default (scaled leaves max_bit out)
    assert "def batch_frexp(inputs, max_bit=31):" in p.rewrites[0].source
    call = "scaled, (torch.randn(3, 4), torch.rand(4, dtype=torch.float64) + 0.1)"
    assert graphs_in_fresh_process([batch_frexp, scaled], p.rewrites[0].source, call, "import decimal\n") == 1
