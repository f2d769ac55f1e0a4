"""``compare`` runs every compiled run past the first call's lazy set-up, as a training loop is.

transformers installs its output-capturing hooks on a model's first call (behind a lock and a
flag on the model); Dynamo breaks the graph there. A user's loop goes through that once; explain
after one eager call does not see it. nstviz restores module state between runs, so without the
warm-up every run was a first call: Phi-4-multimodal showed 12 graphs where a warm model has 5,
and the advisor recommended a mark that only helped the first call.
"""

from __future__ import annotations

import torch
from torch import nn

import nstviz

_calls: list[int] = []
_interrupt_at = [0]


@torch._dynamo.disable
def _interrupt() -> None:
    raise KeyboardInterrupt


class LazilyHooked(nn.Module):
    """Installs a forward hook on its first call, as transformers' ``maybe_install_capturing_hooks``."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = nn.Linear(4, 4)
        self.seen: list[torch.Tensor] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + 1
        if not getattr(self, "_hooks_installed", False):
            torch._dynamo.graph_break()  # set-up code Dynamo does not trace (transformers': a lock, a setattr)
            self.inner.register_forward_hook(lambda mod, args, out: None)
            self._hooks_installed = True
        _calls.append(1)
        if len(_calls) == _interrupt_at[0]:
            _interrupt()
        return self.inner(x).relu() * 2


def _explain_graphs(model: nn.Module, x: torch.Tensor, warm: bool) -> int:
    torch._dynamo.reset()
    if warm:
        model(x)
    return torch._dynamo.explain(model)(x).graph_count


def test_the_baseline_is_the_warm_model_as_explain_after_one_call_counts_it():
    x = torch.randn(3, 4)
    cold, warm = _explain_graphs(LazilyHooked(), x, False), _explain_graphs(LazilyHooked(), x, True)
    assert cold > warm == 1  # the set-up breaks the first call only

    model = LazilyHooked()
    report = nstviz.compare(model, x, backend="aot_eager", time=False)
    assert report.counts["baseline"].graphs == warm
    assert report.outputs.match is True
    # one hook, as after any call of the model: not one per run
    assert len(model.inner._forward_hooks) == 1


def test_an_interrupted_capture_leaves_no_warm_up_behind():
    model = LazilyHooked()
    _calls.clear()
    _interrupt_at[0] = 3  # the baseline's call, after the two eager ones
    try:
        nstviz.compare(model, torch.randn(3, 4), backend="aot_eager", time=False)
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the interrupt did not reach the caller")
    finally:
        _interrupt_at[0] = 0
    assert len(model.inner._forward_hooks) == 0 and not hasattr(model, "_hooks_installed")
