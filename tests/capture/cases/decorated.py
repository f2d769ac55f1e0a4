# A cell that already uses nonstrict_trace as a decorator (run through trace_code).
import zlib

import torch


@torch._dynamo.nonstrict_trace
def scale(x):
    return x * (zlib.crc32(b"nstviz") % 5 + 1)  # line 9


@torch.compile(fullgraph=True)
def step(x):
    return scale(x).sin()  # line 14


y = step(torch.ones(3))
