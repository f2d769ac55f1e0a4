"""nstviz's built-in example (``nstviz demo`` runs it twice: as written, then non-strict).

Two helpers that ``torch.compile`` cannot trace, each fixed by ``nonstrict_trace``:

1. ``rms_scale``, called in every block of a small ``nn.Module``: Dynamo cannot trace the
   explicit ``graph_break()`` standing in for code it does not support, so the model
   compiles into one graph per fragment. Traced non-strictly, it compiles as one graph.
2. ``get_magic_num`` (the example from ``torch._dynamo.nonstrict_trace``'s documentation)
   calls ``zlib.crc32``, a C function Dynamo cannot trace, so ``fullgraph=True`` fails.
   Traced non-strictly, ``func`` compiles as one graph. The checksum is computed once,
   while tracing, and baked into the graph as a constant: fine here, as it never changes.

Run it yourself with ``nstviz run demo.py --nonstrict rms_scale,get_magic_num``.
"""

import zlib

import torch
from torch import nn


def rms_scale(h):
    """Scale rows to unit RMS (the helper Dynamo cannot trace)."""
    torch._dynamo.graph_break()  # stands in for any Python Dynamo does not support
    return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)


class Block(nn.Module):
    """Linear, then the helper, then a residual."""

    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):  # noqa: D102
        return x + torch.relu(rms_scale(self.proj(x)))


class TinyNet(nn.Module):
    """A few blocks and a head."""

    def __init__(self, dim=16, depth=3):
        super().__init__()
        self.blocks = nn.Sequential(*[Block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, 4)

    def forward(self, x):  # noqa: D102
        return self.head(self.blocks(x))


def get_magic_num():
    """A number from a C library: Dynamo cannot trace ``zlib.crc32``."""
    return torch.tensor([float(zlib.crc32(b"nstviz") % 97)])


@torch.compile(fullgraph=True)
def func(x):
    """Add the magic number; fullgraph=True makes any graph break an error."""
    return x + get_magic_num()


torch.manual_seed(0)
model = TinyNet()
compiled = torch.compile(model)
y = compiled(torch.randn(2, 16))

# Last: with fullgraph=True the baseline stops here with an error (the break is fatal).
z = func(torch.rand(10))
