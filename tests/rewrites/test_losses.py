"""Loss and training code: a nested helper's guarded masked fill, a ``warnings.warn`` in the compiled forward,
a log before dropout under gradient checkpointing, a check mixing a flag, a size and tensor data."""

from __future__ import annotations

import inspect

import torch

import nstviz
from nstviz.advisor.rewrites import BreakSite, propose, propose_check
from nstviz.capture.grad_check import gradients, gradients_differ
from nstviz.capture.trials import other_input_sets
from tests.rewrites import toys_losses as toys


def _statuses(report):
    return [(c.function, c.status) for c in report.candidates]


def _line(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_a_nested_helpers_guarded_masked_fill_is_rewritten_in_the_function_that_defines_it():
    lp = torch.randn(2, 5, 7).log_softmax(-1)
    target = torch.tensor([[1, 2, 0, 0, 3], [4, 0, 5, 6, 6]])
    report = nstviz.compare(toys.padded_nll, lp, target, auto=True, backend="eager", time=False)
    assert ("rewrite: padded_nll.<locals>._mask_pads (guarded-write)", "improved") in _statuses(report), report.candidates
    rec = report.recommendation
    assert rec is not None and (rec.graphs_before, rec.graphs_after) == (4, 1)
    assert "def padded_nll(" in rec.code and "        ll.masked_fill_(pad_mask, 0.0)\n        return ll" in rec.code
    assert "    if pad_mask.any():" not in rec.code  # only the comment names the guard


def test_a_warning_in_the_compiled_forward_is_skipped_under_compile_and_labels_keep_their_ignore_index():
    torch.manual_seed(0)
    model = toys.Tagger().train()
    ids = torch.randint(1, 20, (2, 6))
    labels = ids.clone()
    labels[:, -2:] = -100
    varied = other_input_sets((ids, labels), {})[0][0][1]
    assert torch.equal(varied[:, -2:], labels[:, -2:]) and not torch.equal(varied, labels)  # -100 stays where it was
    report = nstviz.compare(model, ids, labels, auto=True, time=False)
    assert ("rewrite: Tagger.forward (logger-noop)", "improved") in _statuses(report), report.candidates
    rec = report.recommendation
    assert rec is not None and (rec.graphs_before, rec.graphs_after) == (2, 1)
    assert "torch._dynamo.config.ignore_logger_methods = {*torch._dynamo.config.ignore_logger_methods, warnings.warn}" \
        in rec.code


def test_the_check_on_other_inputs_accepts_what_the_code_compiled_as_written_does_when_that_differs_from_eager():
    torch.manual_seed(0)
    model = toys.CheckpointedBlock().train()
    x = torch.randn(4, 8)
    # Dynamo's eager backend recomputes the checkpointed dropout with other masks: gradients differ from eager
    torch.manual_seed(1)
    want = gradients({"return": model(x)})
    torch._dynamo.reset()
    torch.manual_seed(1)
    got = gradients({"return": torch.compile(model, backend="eager")(x)})
    assert gradients_differ(want, got) is not None
    report = nstviz.compare(model, x, auto=True, time=False)
    kept = next(c for c in report.candidates if c.function == "rewrite: CheckpointedBlock.forward (logger-noop)")
    assert kept.status == "improved", kept
    assert "where they differ from eager, the code compiled as written differs the same way" in (kept.error or "")


def test_a_check_guarded_by_a_python_flag_and_a_check_on_sizes_stay_python():
    brk = BreakSite("GB0170", _line(toys.option_loss, "torch.any("), "Data-dependent branching")
    r = propose_check(toys.option_loss, brk).rewrites[0]
    assert "    if labels.numel() != expected:\n        raise ValueError('one label per row')" in r.source
    assert "    if not soft_labels:\n        torch._assert_async(" in r.source
    assert [x.remedy for x in propose(toys.option_loss, brk).rewrites][:1] == ["check-assert"]
    report = nstviz.compare(toys.option_loss, torch.randn(4, 3), torch.tensor([0, 2, 1, 1]), auto=True,
                            backend="eager", time=False)
    assert ("rewrite: option_loss (check-assert)", "improved") in _statuses(report), report.candidates
