"""Remedy: modules a loss builds on every call are built once per distinct arguments (real compiles, explain)."""

from __future__ import annotations

import inspect

import torch
from torch import nn

from nstviz.advisor.code import rewrite_lines
from nstviz.advisor.rewrites import BreakSite, propose_build_once, verify
from tests.rewrites._paste import graphs_in_fresh_process


class ToyConfig:
    """What a model's config gives its loss: plain numbers."""

    def __init__(self, num_classes=3, eos_coef=0.1, cost=2.0):
        self.num_classes, self.eos_coef, self.cost = num_classes, eos_coef, cost


class ToyMatcher(nn.Module):
    """Shaped like a detection loss's matcher: numbers in, no parameters."""

    def __init__(self, cost):
        super().__init__()
        self.cost = cost

    def forward(self, logits):
        return (logits * self.cost).argmax(-1)


class ToyCriterion(nn.Module):
    """Shaped like DETR's ``ImageLoss``: a matcher and a class-weight buffer made in ``__init__``."""

    def __init__(self, matcher, num_classes, eos_coef):
        super().__init__()
        self.matcher = matcher
        weight = torch.ones(num_classes + 1)
        weight[-1] = eos_coef
        self.empty_weight = nn.Buffer(weight)

    def forward(self, logits, target):
        picked = self.matcher(logits)
        return nn.functional.cross_entropy(logits, target, weight=self.empty_weight) + 0.01 * picked.float().mean()


def toy_detection_loss(logits, target, config):
    """Shaped like transformers' ``ForObjectDetectionLoss``: builds its matcher and criterion on every call."""
    matcher = ToyMatcher(cost=config.cost)
    criterion = ToyCriterion(matcher=matcher, num_classes=config.num_classes, eos_coef=config.eos_coef)
    criterion.to(logits.device)
    return criterion(logits.relu(), target) * 2


def toy_loss_with_a_layer(logits, target, config):
    """A module with parameters built per call: a fresh random layer each time, which building once would change."""
    head = nn.Linear(config.num_classes + 1, config.num_classes + 1)
    return nn.functional.cross_entropy(head(logits), target)


CONFIG = ToyConfig()
SETS = [(torch.randn(6, 4), torch.tensor([0, 1, 2, 3, 0, 1]), CONFIG),
        (torch.randn(6, 4), torch.tensor([3, 3, 2, 1, 0, 0]), CONFIG)]


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _site(fn, text):
    return BreakSite("GB0116", _line_of(fn, text), "Unexpected type in sourceless builder")


def test_both_modules_are_built_once_and_the_graphs_go_down_to_one():
    p = propose_build_once(toy_detection_loss, _site(toy_detection_loss, "criterion = ToyCriterion"))
    assert [r.remedy for r in p.rewrites] == ["build-once"]
    src = p.rewrites[0].source
    assert "_nstviz_k0 = _nstviz_build_key(ToyMatcher, cost=config.cost)\n    matcher = _nstviz_built[_nstviz_k0][0]" in src
    assert "_nstviz_k1 = _nstviz_build_key(ToyCriterion, matcher=matcher" in src
    assert "@torch._dynamo.assume_constant_result" in src
    v = verify(toy_detection_loss, p.rewrites[0], SETS)
    assert v.kept and v.graphs_after == 1 and v.graphs_before > 1 and v.outputs_match == [True, True], v
    assert "_nstviz_built" not in globals() and "_nstviz_build_key" not in globals()  # helpers only while applied


def test_a_new_config_value_builds_a_new_module():
    r = propose_build_once(toy_detection_loss, _site(toy_detection_loss, "criterion = ToyCriterion")).rewrites[0]
    logits, target = torch.randn(6, 4), torch.tensor([0, 1, 2, 3, 0, 1])
    other = ToyConfig(eos_coef=0.9)
    with r.applied():
        torch._dynamo.reset()
        compiled = torch.compile(toy_detection_loss, backend="aot_eager")
        first, second = compiled(logits, target, CONFIG), compiled(logits, target, other)
        built = r.module_globals["_nstviz_built"]
    torch._dynamo.reset()
    torch.testing.assert_close(first, toy_detection_loss(logits, target, CONFIG))
    torch.testing.assert_close(second, toy_detection_loss(logits, target, other))
    assert len(built) == 3  # one matcher (the same cost), a criterion per eos_coef


def test_a_module_with_parameters_is_not_built_once():
    p = propose_build_once(toy_loss_with_a_layer, _site(toy_loss_with_a_layer, "head = nn.Linear"))
    assert [r.remedy for r in p.rewrites] == ["build-once"]
    v = verify(toy_loss_with_a_layer, p.rewrites[0], SETS)
    assert not v.kept and "has parameters" in v.reason, v


def test_a_function_that_builds_no_module_gets_nothing():
    p = propose_build_once(ToyMatcher.forward, BreakSite("GB0116"))
    assert (p.rewrites, p.fits) == ([], False)


def test_paste_in_a_fresh_process():
    r = propose_build_once(toy_detection_loss, _site(toy_detection_loss, "criterion = ToyCriterion")).rewrites[0]
    call = "toy_detection_loss, (torch.randn(6, 4), torch.tensor([0, 1, 2, 3, 0, 1]), ToyConfig())"
    defs = [ToyConfig, ToyMatcher, ToyCriterion, toy_detection_loss]
    setup = "from torch import nn\n"
    assert graphs_in_fresh_process(defs, "", call, setup) > 1
    assert graphs_in_fresh_process(defs, r.source, call, setup) == 1


def test_pasted_for_a_library_module_the_helpers_are_bound_in_it():
    r = propose_build_once(toy_detection_loss, _site(toy_detection_loss, "criterion = ToyCriterion")).rewrites[0]
    imports: dict[str, None] = {}
    lines = rewrite_lines(r, imports)
    assert "from tests.rewrites import test_build_once" in imports
    tail = [line for line in lines if line.startswith("test_build_once.")]
    assert tail == [
        "test_build_once._nstviz_build_key = _nstviz_build_key  # the rewrite uses it",
        "test_build_once._nstviz_built = _nstviz_built  # the rewrite uses it",
        "test_build_once.toy_detection_loss.__code__ = toy_detection_loss.__code__  # keeps test_build_once's globals;"
        " every caller sees it",
    ]


class ToyDetector(nn.Module):
    """A model whose forward ends in the loss that builds its modules (as DETR's calls ``ForObjectDetectionLoss``)."""

    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 4)
        self.config = CONFIG

    def forward(self, x, target):
        return toy_detection_loss(self.head(x), target, self.config)


def test_the_advisor_finds_the_builder_from_the_break_in_a_constructor_and_keeps_the_rewrite():
    import nstviz

    torch.manual_seed(0)
    report = nstviz.compare(ToyDetector(), torch.randn(6, 4), torch.tensor([0, 1, 2, 3, 0, 1]),
                            auto=True, backend="eager", time=False)
    (built,) = [c for c in report.candidates if c.function.endswith("toy_detection_loss (build-once)")]
    assert built.status == "improved", [(c.function, c.status, c.error) for c in report.candidates]
    assert "builds the module whose constructor holds the break at" in built.why, built.why
    rec = report.recommendation
    assert rec is not None and rec.graphs_after == 1 < rec.graphs_before, rec
    assert "test_build_once._nstviz_built = _nstviz_built  # the rewrite uses it" in rec.code
