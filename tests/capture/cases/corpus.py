# Capture corpus: small programs with known graph breaks. Line numbers are asserted by tests;
# append new cases at the end of the file.
import dataclasses
import zlib

import torch
import torch.utils._pytree as pytree


def opaque_scale():
    return zlib.crc32(b"nstviz") % 5 + 1  # line 11: GB0007 in every helper below


# -- dict / list / nested arguments -------------------------------------------------------
def dict_helper(d):
    s = opaque_scale()
    return {"a": d["a"] * s, "b": d["b"].sin()}


def dict_fn(x):
    d = dict_helper({"a": x, "b": x + 1})
    return d["a"] + d["b"]


def list_helper(xs):
    s = opaque_scale()
    return [t * s for t in xs]


def list_fn(x):
    ys = list_helper([x, x.cos()])
    return ys[0] - ys[1]


def nested_helper(tree):
    s = opaque_scale()
    return {"pair": (tree["xs"][0] * s, tree["xs"][1]), "y": tree["y"]["z"].exp()}


def nested_fn(x):
    out = nested_helper({"xs": [x, x * 2], "y": {"z": x}})
    return out["pair"][0] + out["pair"][1] + out["y"]


# -- custom pytree class and dataclass -----------------------------------------------------
class Pair:
    def __init__(self, left, right):
        self.left = left
        self.right = right


pytree.register_pytree_node(
    Pair,
    lambda p: ((p.left, p.right), None),
    lambda children, _ctx: Pair(*children),
)


def pair_helper(p):
    s = opaque_scale()
    return p.left * s + p.right


def pair_fn(x):
    return pair_helper(Pair(x, x.sin())).relu()


@dataclasses.dataclass
class Stats:
    mean: torch.Tensor
    std: torch.Tensor


pytree.register_dataclass(Stats)


def stats_helper(x):
    s = opaque_scale()
    return Stats(mean=x.mean() * s, std=x.std())


def stats_fn(x):
    st = stats_helper(x)
    return (x - st.mean) / st.std


# -- nn.Module argument, method of a module --------------------------------------------------
def module_helper(layer, x):
    s = opaque_scale()
    return layer(x) * s


class WithHelper(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        return module_helper(self.lin, x).tanh()


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def stats(self, x):
        s = opaque_scale()
        return x.mean(-1, keepdim=True) * s

    def forward(self, x):
        return self.lin(x) - self.stats(x)


class Stack(torch.nn.Module):
    def __init__(self, n=3):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block() for _ in range(n))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


# -- several call sites and a loop --------------------------------------------------------
def loop_helper(x):
    s = opaque_scale()
    return x * s


def loop_fn(x):
    x = loop_helper(x) + 1
    for _ in range(4):
        x = loop_helper(x).sin()
    return loop_helper(x)


# -- a global tensor read inside the helper -----------------------------------------------
OFFSET = torch.full((3,), 2.0)


def global_helper(x):
    s = opaque_scale()
    return x * s + OFFSET


def global_fn(x):
    return global_helper(x).cos()


# -- data-dependent: nonstrict_trace does not help -------------------------------------------
def item_helper(x):
    n = x.sum().item()
    return x * n


def item_fn(x):
    return item_helper(x) + 1


# -- non-pytree return: GB0251 ------------------------------------------------------------
class Opaque:
    def __init__(self, t):
        self.t = t


def opaque_helper(x):
    s = opaque_scale()
    return Opaque(x * s)


def opaque_fn(x):
    return opaque_helper(x).t + 1


# -- training step --------------------------------------------------------------------------
class Trainer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 2)

    def forward(self, x):
        h = self.lin(x)
        return loop_helper(h).pow(2).mean()


def train_step(model, x):
    loss = model(x)
    loss.backward()
    return loss


# -- dynamic shapes ---------------------------------------------------------------------------
def dyn_fn(x):
    return loop_helper(x).sum(0)


# -- fullgraph=True with a data-dependent helper: fatal GB0251 under nonstrict ---------------
@torch.compile(fullgraph=True)
def item_full(x):
    return item_helper(x) + 1  # line 202
