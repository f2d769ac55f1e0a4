"""Namespace rollback through trace_code: a training-step cell runs once per run, from one state."""

import copy

import torch

import nstviz

SETUP = """
import torch
from torch import nn

def scale(x):
    print("scale")        # breaks the graph
    return x * 0.5

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, x):
        return scale(self.lin(x)).tanh()

torch.manual_seed(0)
model = Net()
opt = torch.optim.Adam(model.parameters(), lr=0.1)
x = torch.randn(8, 4)
y = torch.randn(8, 3)
cmodel = torch.compile(model)
steps = []
"""

CELL = """
opt.zero_grad()
loss = ((cmodel(x) - y) ** 2).mean()
loss.backward()
opt.step()
steps.append(1)
w = model.lin.weight.detach().clone()
"""


def test_training_cell_runs_from_the_same_state_each_run_and_ends_after_one_step():
    ns: dict = {}
    exec(SETUP, ns)
    reference = copy.deepcopy(ns["model"])
    ref_opt = torch.optim.Adam(reference.parameters(), lr=0.1)
    ref_opt.zero_grad()
    ((reference(ns["x"]) - ns["y"]) ** 2).mean().backward()
    ref_opt.step()
    weight = ns["model"].lin.weight

    report = nstviz.trace_code(CELL, ns, nonstrict=("scale",))

    assert report.diff.resolved  # the print break is gone under nonstrict_trace
    assert report.outputs.match is True  # both runs started from the same parameters and Adam state
    paths = {d.path for d in report.outputs.details}
    assert {"loss", "w"} <= paths
    # the namespace ends as after one run: one step, one append, same objects
    assert ns["steps"] == [1]
    assert ns["model"].lin.weight is weight
    assert torch.allclose(weight, reference.lin.weight, atol=1e-6)
    assert all(float(s["step"]) == 1.0 for s in ns["opt"].state.values())
