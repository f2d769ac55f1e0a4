# Programs for the bad-input tests (names that cannot be marked).
import functools

import torch


def helper(x):
    return x + 1


class Model(torch.nn.Module):
    def forward(self, x):
        return helper(x)

    @property
    def size(self):
        return 1


@torch.compile
def outer(x):
    inner = lambda y: y + 1  # noqa: E731
    return inner(x)


partial_helper = functools.partial(helper)
