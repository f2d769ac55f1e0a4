"""Bad nonstrict= input: each gets a specific, actionable error before anything runs."""

from __future__ import annotations

import re

import pytest
import torch

import nstviz
from nstviz.capture import marking
from nstviz.errors import NameResolutionError, NotMarkableError, UsageError
from tests.capture.cases import bad_inputs as b
from tests.capture.cases import corpus as c

NS = {name: getattr(b, name) for name in ("helper", "Model", "outer", "partial_helper", "functools", "torch")}
NS["__name__"] = "__main__"


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        ("nope", NameResolutionError, "'nope' is not defined in the namespace"),
        ("Model.nope", NameResolutionError, "Model (type) has no attribute 'nope'"),
        ("", NameResolutionError, "empty name"),
        ("Model", NotMarkableError, "is a class (Model), not a function"),
        ("Model.size", NotMarkableError, "is a property"),
        ("partial_helper", NotMarkableError, "functools.partial"),
        ("torch.sin", NotMarkableError, "builtin or C function"),
        ("inner", NotMarkableError, "defined inside 'outer'"),
        (len, NotMarkableError, "builtin or C function"),
        (42, NameResolutionError, "takes function names or callables"),
    ],
)
def test_bad_specs(spec, error, message):
    with pytest.raises(error, match=re.escape(message)):
        marking.resolve([spec], NS)


def test_the_compiled_function_is_marked_as_torch_marks_it():
    # torch.compile's own function: marked (tests/users: what @nonstrict_trace under @torch.compile does)
    (t,) = marking.resolve(["outer"], NS)
    assert t.function is b.outer._torchdynamo_orig_callable
    assert "the function torch.compile compiles" in t.warning


def test_ambiguous_bare_name():
    ns = {"Block": c.Block, "Other": type("Other", (), {"stats": lambda self, x: x, "__module__": "__main__"})}
    with pytest.raises(NameResolutionError, match=re.escape("'stats' is ambiguous: it could be Block.stats, Other.stats")):
        marking.resolve(["stats"], ns)


def test_bare_method_name_in_a_namespace_without_dunder_name():
    # classes defined in a plain dict without __name__ get __module__ == "builtins"
    ns: dict = {}
    exec("class Block:\n    def stats(self, x):\n        return x\n", ns)
    assert ns["Block"].__module__ == "builtins"
    (t,) = marking.resolve(["stats"], ns)
    assert t.function is ns["Block"].stats
    exec("class Other:\n    def stats(self, x):\n        return x\n", ns)
    with pytest.raises(NameResolutionError, match=re.escape("'stats' is ambiguous: it could be Block.stats, Other.stats")):
        marking.resolve(["stats"], ns)
    # real builtins stay library code
    assert marking.resolve(["Block.stats"], {**ns, "dict": dict, "int": int})[0].function is ns["Block"].stats


def test_method_and_module_paths_resolve_to_functions():
    model = c.Stack()
    ns = {"model": model, "Block": c.Block, "corpus": c}
    got = marking.resolve(["Block.stats", "model.blocks.1.stats", "corpus.loop_helper", "stats"], ns)
    assert [t.function for t in got] == [c.Block.stats, c.loop_helper]  # duplicates merged
    (t,) = marking.resolve([model.blocks[0].stats], ns)
    assert t.function is c.Block.stats


def test_module_instance_marks_forward_with_warning():
    (t,) = marking.resolve(["model"], {"model": b.Model()})
    assert t.function is b.Model.forward and "registers a no-op forward pre-hook" in t.warning


def test_closure_created_in_compiled_function_is_refused():
    ns = {"outer": b.outer}

    def make():
        def inner(y):
            return y

        return inner

    fn = make()
    fn.__qualname__ = "outer.<locals>.inner"
    with pytest.raises(NotMarkableError, match="defined inside the compiled function 'outer'"):
        marking.resolve([fn], ns)


def test_api_usage_errors():
    with pytest.raises(UsageError, match="needs a callable"):
        nstviz.compare(3)
    with pytest.raises(UsageError, match="baseline must be"):
        nstviz.compare(c.loop_fn, torch.ones(2), baseline="nope")
    with pytest.raises(UsageError, match="needs the code as a str"):
        nstviz.trace_code(b"x", {})
    with pytest.raises(UsageError, match="needs a dict namespace"):
        nstviz.trace_code("x = 1", [])


def test_marks_are_removed_after_errors():
    from torch._dynamo import trace_rules

    before = frozenset(trace_rules._nonstrict_trace_callable_ids())
    with pytest.raises(ValueError):
        with marking.marked([c.loop_helper]):
            assert id(c.loop_helper) in trace_rules._nonstrict_trace_callable_ids()
            raise ValueError
    assert frozenset(trace_rules._nonstrict_trace_callable_ids()) == before


def test_torch_without_nonstrict_trace_is_refused_clearly(monkeypatch):
    from nstviz.errors import UnsupportedTorchError

    monkeypatch.delattr(torch._dynamo, "nonstrict_trace")
    with pytest.raises(UnsupportedTorchError, match=r"lacks torch._dynamo.nonstrict_trace.*torch==2.13.0"):
        nstviz.compare(c.loop_fn, torch.ones(2))
    with pytest.raises(UnsupportedTorchError):
        nstviz.trace_code("y = 1", {})
