"""Small user programs the reliability tests run through nstviz (real torch.compile)."""

from __future__ import annotations

from typing import Any

import torch

SEED_DEFS = """
import torch
def get_magic_num():
    torch._dynamo.graph_break()
    return torch.tensor([42.0])
"""

SEED_CELL = """
@torch.compile(fullgraph=True)
def func(x):
    return x + get_magic_num()

out = func(torch.ones(4))
"""

# The seed cell, but compiled without fullgraph: the break is not fatal, so the advisor has work.
BREAKING_CELL = """
def helper(x):
    torch._dynamo.graph_break()
    return x * 2

@torch.compile
def fn(x):
    return helper(x.sin()) + 1

y = fn(torch.ones(4))
"""

TWO_HELPERS_CELL = """
def helper_a(x):
    torch._dynamo.graph_break()
    return x * 2

def helper_b(x):
    print("b")
    return x + 3

@torch.compile
def fn(x):
    return helper_b(helper_a(x.sin())) + 1

y = fn(torch.ones(4))
"""
"""Two breaking helpers: the advisor has two candidates (helper_a, helper_b), one attempt each."""

RANDOM_CELL = """
@torch.compile
def f(x):
    return x + torch.rand(3)

y = f(torch.rand(3))
"""


def seed_namespace() -> dict[str, Any]:
    """A fresh namespace with the seed's ``get_magic_num`` defined."""
    ns: dict[str, Any] = {}
    exec(compile(SEED_DEFS, "<seed-defs>", "exec"), ns)
    return ns


def get_magic_num() -> torch.Tensor:
    torch._dynamo.graph_break()
    return torch.tensor([42.0])


def func(x: torch.Tensor) -> torch.Tensor:
    return x + get_magic_num()


def helper(x: torch.Tensor) -> torch.Tensor:
    torch._dynamo.graph_break()
    return x * 2


def breaking(x: torch.Tensor) -> torch.Tensor:
    return helper(x.sin()) + 1


class Interrupter:
    """Raises ``KeyboardInterrupt`` on its ``at``-th call (1-based), counting across runs."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.calls = 0

    def __call__(self) -> None:
        self.calls += 1
        if self.calls == self.at:
            raise KeyboardInterrupt(f"simulated Ctrl-C at call {self.at}")
