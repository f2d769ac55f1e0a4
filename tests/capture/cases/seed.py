# The seed example: get_magic_num calls a C function Dynamo cannot trace.
import zlib

import torch


def get_magic_num():
    seed = zlib.crc32(b"nstviz") % 7  # line 8: the break (GB0007)
    return torch.tensor([float(seed)]) * 2 + torch.ones(1).sin()


@torch.compile(fullgraph=True)
def func(x):
    return x + get_magic_num()  # line 14


def plain(x):
    return x + get_magic_num()  # line 18


@torch.compile(fullgraph=True)
def func_call_site(x):
    return x + torch._dynamo.nonstrict_trace(get_magic_num)()  # line 23
