# Breaks Dynamo reaches more often than it counts them (tests/capture/test_counting.py).
import torch


def helper(y):
    torch._dynamo.graph_break()  # line 6
    return y + 1


def entry(x):
    return helper(x * 2) - 1  # line 11


def in_try(x):
    try:
        x = helper(x * 2)  # line 16: Dynamo cannot resume inside a try block
    except ValueError:
        pass
    return x


def branch(x):
    y = x * 2
    if y.sum() > 0:  # line 24: data-dependent branching, logged but not counted
        return y + 1
    return y - 1


def loop(x):
    for _ in range(3):
        x = x * 2
        if x.sum() > 0:  # line 32: in a loop, Dynamo skips the frame (logged, not counted)
            x = x + 1
    return x
