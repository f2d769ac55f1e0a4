"""A rewrite must keep gradients, not only outputs, where the code trains (nstviz.capture.grad_check)."""

from __future__ import annotations

import torch

from nstviz.capture.grad_check import gradients, gradients_differ, trains


class DropBranch(torch.nn.Module):
    """A value branch around a dropout, as written or as ``torch.cond``."""

    def __init__(self, use_cond: bool = False):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.drop = torch.nn.Dropout(0.5)
        self.use_cond = use_cond

    def forward(self, x, m):
        if not self.use_cond:
            return self.drop(self.lin(x)) if m.any() else x.clone()
        return torch.cond(m.any(), lambda x: self.drop(self.lin(x)), lambda x: x.clone(), (x,))


def _pair():
    torch.manual_seed(0)
    written = DropBranch().train()
    rewritten = DropBranch(use_cond=True).train()
    rewritten.lin = written.lin  # the same parameters, as a live rewrite has
    return written, rewritten


def _grads_from(module, seed, *args):
    torch.manual_seed(seed)
    out = module(*args)
    return out, gradients(out)


def test_torch_cond_around_a_dropout_keeps_the_outputs_and_changes_the_gradients():
    written, rewritten = _pair()
    x, m = torch.randn(4, 8), torch.tensor([True])
    compiled = torch.compile(rewritten, backend="eager")
    out_w, want = _grads_from(written, 1, x, m)
    out_c, got = _grads_from(compiled, 1, x, m)
    torch.testing.assert_close(out_c, out_w)  # what the output check alone sees
    assert want is not None and got is not None
    assert gradients_differ(want, got) == "the gradient of a 8x8 parameter"
    _, again = _grads_from(written, 1, x, m)
    assert gradients_differ(want, again) is None


def test_gradients_leave_grad_untouched_and_need_an_output_that_carries_one():
    written, _ = _pair()
    x, m = torch.randn(4, 8), torch.tensor([True])
    _, grads = _grads_from(written, 0, x, m)
    assert {tuple(leaf.shape) for leaf, _ in grads.values()} == {(8, 8), (8,)}
    assert all(p.grad is None for p in written.parameters())
    with torch.no_grad():
        assert gradients(written(x, m)) is None
    assert gradients({"ids": torch.arange(3)}) is None


def test_a_detached_output_loses_its_gradients():
    lin = torch.nn.Linear(3, 3)
    x = torch.randn(2, 3)
    want = gradients({"y": lin(x) * 2})
    got = gradients({"y": lin(x).detach() * 2 + lin(x) * 0})  # reaches the leaves, with zero gradient
    assert gradients_differ(want, got) is not None


def test_trains_follows_the_module_and_its_bound_methods():
    m = torch.nn.Linear(2, 2)
    assert trains(m) and trains(m.forward) and trains(lambda x: x)
    m.eval()
    assert not trains(m) and not trains(m.forward)


def test_the_advisor_refuses_a_rewrite_whose_gradients_differ(monkeypatch):
    # without the guard that keeps torch.cond off a branch drawing random numbers, the cond form
    # reaches the check on other inputs: its outputs equal eager, its gradients do not. (The where
    # form draws the branch's mask always, so the dropout after the branch differs: outputs differ.)
    import nstviz
    from nstviz.advisor.rewrites import branches

    monkeypatch.setattr(branches, "_draws_random", lambda stmts: False)
    torch.manual_seed(0)
    model = Noisy().train()
    report = nstviz.compare(model, torch.randn(4, 8), auto=True, backend="eager", time=False)
    by_remedy = {c.function.rsplit("(", 1)[-1].rstrip(")"): c for c in report.candidates}
    assert "gradients differ from eager on input set" in by_remedy["branch-cond"].error, report.candidates
    assert by_remedy["branch-cond"].status != "improved"
    assert by_remedy["branch-where"].status != "improved", report.candidates
    assert report.recommendation is None
    assert all(p.grad is None for p in model.parameters())


class Noisy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, h):
        h = self.lin(h)
        if h.sum() > 0:
            h = torch.nn.functional.dropout(h, 0.5) * 2
        return torch.nn.functional.dropout(h.relu(), 0.5)


def test_a_leaf_the_call_makes_itself_has_no_counterpart_and_a_lost_parameter_gradient_counts():
    lin = torch.nn.Linear(3, 3)
    x = torch.randn(2, 3)

    def made_leaf(x):  # as wav2vec2's feature encoder does in training: requires_grad set on an intermediate
        h = (x * 2).detach()
        h.requires_grad = True
        return lin(h)

    want = gradients(made_leaf(x))
    assert gradients_differ(want, gradients(made_leaf(x))) is None  # two different h leaves, same parameters
    assert gradients_differ(want, gradients(lin(x).detach() + x.requires_grad_() * 0)) is None  # no shared leaf
    lost = gradients(lin.bias * 0 + made_leaf(x).detach() * lin.bias)  # reaches the bias only
    assert gradients_differ(want, lost) == "the gradient of a 3x3 parameter"
