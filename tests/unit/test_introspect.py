"""Function introspection (nstviz/_introspect.py): one unwrap for the capture, the advisor and
the non-input read scan."""

from __future__ import annotations

import functools

import torch

from nstviz.capture._introspect import (
    code_key,
    entry_function,
    is_module_method,
    owner_class,
    qualified_name,
    unwrap,
    unwrap_bound,
)


def helper(x, scale=2):
    return x * scale


def decorated(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


class Block(torch.nn.Module):
    def forward(self, x):
        return x

    def stats(self, x):
        return x.mean()

    @staticmethod
    def static(x):
        return x


class Plain:
    def method(self):
        return 1

    def __call__(self, x):
        return x


def test_unwrap_goes_through_every_wrapper_kind():
    assert unwrap(helper) is helper
    assert unwrap(decorated(helper)) is helper
    assert unwrap(functools.partial(helper, scale=3)) is helper
    assert unwrap(functools.partial(decorated(helper), 1)) is helper
    assert unwrap(Block().stats) is Block.stats
    assert unwrap(Block.__dict__["static"]) is Block.static
    assert unwrap(torch.compile(helper)) is helper


def test_unwrap_stops_on_a_wrapped_cycle():
    def f():
        return 1

    f.__wrapped__ = f  # a cycle: must not hang
    assert unwrap(f) is f


def test_unwrap_bound_keeps_the_instance():
    block = Block()
    assert unwrap_bound(block.stats) == (Block.stats, block)
    plain = Plain()
    assert unwrap_bound(plain) == (Plain.__call__, plain)
    assert unwrap_bound(len) == (None, None)


def test_names_owner_and_module_methods():
    assert qualified_name(Block.stats) == "Block.stats"
    assert qualified_name(helper) == "helper"
    assert owner_class(Block.stats) is Block and owner_class(helper) is None
    assert is_module_method(Block.forward) and not is_module_method(Plain.method) and not is_module_method(helper)
    assert entry_function(Block()) is Block.forward
    assert entry_function(Plain().method) is Plain.method
    assert entry_function(helper) is helper


def test_code_key_survives_a_redefinition_and_unwraps():
    first = helper
    assert code_key(decorated(first)) == code_key(first) == (__file__, first.__code__.co_firstlineno, "helper")
    assert code_key(len) == id(len)
