"""Remedy: a tensor element used as a Python index or roll shift becomes ``torch.index_select`` (real compiles)."""

from __future__ import annotations

import inspect

import torch

from nstviz.advisor.rewrites import BreakSite, choose, propose, propose_index_ops, verify
from tests.rewrites._paste import graphs_in_fresh_process

GB0033 = BreakSite(gb_id="GB0033", message="Data dependent operator")


def delay_weights(x):
    """Autoformer's training attention in small: the top-k delays picked one by one with a topk index."""
    m = x.mean(0)
    _, idx = torch.topk(m, 3)
    w = torch.stack([x[:, idx[i]] for i in range(3)], dim=-1)
    return torch.softmax(w, -1) * 2


def rolled(v, scores):
    """Rolls by a topk index read as a Python int, as a method and as ``torch.roll`` with ``.item()``."""
    _, idx = torch.topk(scores, 2)
    out = v.roll(shifts=-int(idx[0]), dims=1) + torch.roll(v, -idx[1].item(), 1)
    return out.sin()


def from_a_parameter(x, idx):
    """``idx`` may be a list: not this remedy's."""
    return x[:, idx[0]] * 2


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _sets(*shapes):
    g = torch.Generator().manual_seed(0)
    return [tuple(torch.randn(s, generator=g) for s in shapes) for _ in range(2)]


def test_an_element_used_as_an_index_becomes_index_select_and_the_graphs_go_from_two_to_one():
    brk = BreakSite("GB0033", _line_of(delay_weights, "torch.stack"), "Data dependent operator")
    p = propose_index_ops(delay_weights, brk)
    assert [r.remedy for r in p.rewrites] == ["index-select"]
    assert "torch.stack([torch.index_select(x, 1, idx[i].reshape(1)).squeeze(1) for i in range(3)], dim=-1)" \
        in p.rewrites[0].source
    v = verify(delay_weights, p.rewrites[0], _sets((4, 10)))
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 2, 1, [True, True]), v


def test_a_roll_by_an_element_becomes_a_gather_of_positions_and_the_graphs_go_from_three_to_one():
    r = propose_index_ops(rolled, GB0033).rewrites[0]
    assert ("torch.index_select(v, 1, torch.remainder(torch.arange(v.size(1), device=v.device) - -idx[0], v.size(1)))"
            in r.source)
    assert ".roll(" not in r.source.split("\n", 1)[1]  # the comment names it, the code no longer calls it
    v = verify(rolled, r, _sets((4, 10), (10,)))
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 3, 1, [True, True]), v


def test_the_gradient_is_the_same_compiled():
    r = propose_index_ops(rolled, GB0033).rewrites[0]
    (v, scores), _ = _sets((4, 10), (10,))
    want = torch.autograd.grad(rolled(v.requires_grad_(), scores).sum(), v)[0]
    with r.applied():
        got = torch.autograd.grad(torch.compile(r.function, backend="aot_eager")(v, scores).sum(), v)[0]
    assert torch.equal(got, want)


def test_an_index_that_may_be_a_list_or_a_break_elsewhere_is_not_this_remedys():
    assert propose_index_ops(from_a_parameter, GB0033).rewrites == []
    p = propose_index_ops(delay_weights, BreakSite("GB0033", _line_of(delay_weights, "m = x.mean"), ""))
    assert p.rewrites == [] and not p.fits


def test_propose_offers_it_for_gb0033_and_choose_keeps_it():
    best, _ = choose(delay_weights, propose(delay_weights, GB0033).rewrites, _sets((4, 10)))
    assert best is not None and best.remedy == "index-select"


def test_paste_in_a_fresh_process():
    r = propose_index_ops(delay_weights, GB0033).rewrites[0]
    call = "delay_weights, (torch.randn(4, 10),)"
    assert graphs_in_fresh_process([delay_weights], "", call) == 2
    assert graphs_in_fresh_process([delay_weights], r.source, call) == 1


LIBRARY = '''
import functools

import torch


class Cache:
    """A name only this module has, used in an annotation (transformers' ``Cache``)."""


def deprecated(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


class Attention:
    @deprecated
    def delays(self, x: torch.Tensor, cache: Cache | None = None) -> torch.Tensor:
        _, idx = torch.topk(x.mean(0), 3)
        return torch.stack([x[:, idx[i]] for i in range(3)], dim=-1) * 2
'''


def test_a_decorated_library_method_pastes_without_its_decorator_and_annotations(tmp_path, monkeypatch):
    """Autoformer's ``forward`` is ``@deprecate_kwarg``-wrapped and annotated with ``Cache``: the paste names neither."""
    import importlib
    import sys

    from nstviz.advisor.code import rewrite_lines

    (tmp_path / "nstviz_toy_library.py").write_text(LIBRARY)
    monkeypatch.syspath_prepend(str(tmp_path))
    lib = importlib.import_module("nstviz_toy_library")
    try:
        r = propose_index_ops(lib.Attention.delays, GB0033).rewrites[0]
        imports: dict[str, None] = {}
        lines = rewrite_lines(r, imports)  # fills in the imports the lines need
        paste = "\n".join([*imports, *lines])
        assert "@deprecated" not in paste and "Cache" not in paste
        assert "nstviz_toy_library.Attention.delays.__wrapped__.__code__ = delays.__code__" in paste
        setup = f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\nimport nstviz_toy_library\n"
        call = "(lambda x: nstviz_toy_library.Attention().delays(x)), (torch.randn(4, 10),)"
        assert graphs_in_fresh_process([], "", call, setup=setup) == 2
        assert graphs_in_fresh_process([], paste, call, setup=setup) == 1
    finally:
        sys.modules.pop("nstviz_toy_library", None)
