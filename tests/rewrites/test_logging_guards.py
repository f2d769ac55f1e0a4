"""Remedies: a logging call skipped under torch.compile (``logger-noop``), a masked write's guard dropped (``guarded-write``)."""

from __future__ import annotations

import inspect
import logging

import torch

from nstviz.advisor.rewrites import BreakSite, propose, propose_guarded_write, propose_logger_noop, verify
from tests.rewrites import toys_logging as toys
from tests.rewrites._paste import graphs_in_fresh_process

GB0291 = "logging.Logger method not supported for non-export cases"


def _line(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _log_break():
    context = "method: <Logger nstviz.tests.toys_logging (WARNING)>.warning, args: [...]"
    return BreakSite("GB0291", _line(toys.scale_with_default, "logger.warning"), f"{GB0291} {context}")


def test_a_logging_call_is_ignored_under_compile_and_restored_after():
    p = propose(toys.scale_with_default, _log_break())
    assert [r.remedy for r in p.rewrites] == ["logger-noop"], p.notes
    r = p.rewrites[0]
    assert ("torch._dynamo.config.ignore_logger_methods = {*torch._dynamo.config.ignore_logger_methods, "
            "logging.Logger.warning}") in r.source
    before = set(torch._dynamo.config.ignore_logger_methods)
    v = verify(toys.scale_with_default, r, [(torch.ones(3),), (torch.arange(3.0),)])
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 2, 1, [True, True]), v
    assert set(torch._dynamo.config.ignore_logger_methods) == before  # the flag is put back


def test_the_method_is_read_from_the_line_when_the_message_does_not_name_it():
    brk = BreakSite("GB0291", _line(toys.scale_with_default, "logger.warning"), GB0291)
    assert [m.__name__ for m in propose_logger_noop(toys.scale_with_default, brk).rewrites[0].methods] == ["warning"]
    assert not propose_logger_noop(toys.scale_with_default, BreakSite("GB0170", None, "Data-dependent branching")).fits


def test_eager_code_still_logs():
    r = propose_logger_noop(toys.scale_with_default, _log_break()).rewrites[0]
    seen: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())  # type: ignore[method-assign]
    toys.logger.addHandler(handler)
    try:
        with r.applied():
            toys.scale_with_default(torch.ones(2))
    finally:
        toys.logger.removeHandler(handler)
    assert seen == ["`factor` was not provided; falling back to 3"]


def test_paste_in_a_fresh_process_logging():
    r = propose_logger_noop(toys.scale_with_default, _log_break()).rewrites[0]
    call = "toys_logging.scale_with_default, (torch.ones(3),)"
    setup = "from tests.rewrites import toys_logging"
    assert graphs_in_fresh_process([], "", call, setup) == 2
    assert graphs_in_fresh_process([], r.source, call, setup) == 1


def _sets():
    return [(torch.randn(2, 3, 4), torch.tensor([[[1, -1], [-1, -1], [2, 3]]] * 2)),
            (torch.randn(2, 3, 4), torch.tensor([[[1, 0], [1, -1], [2, 3]]] * 2))]


def test_the_guard_of_a_masked_write_goes_and_its_warning_runs_only_eagerly():
    brk = BreakSite("GB0170", _line(toys.average_positions, "(counts == 0).sum()"), "Data-dependent branching")
    p = propose(toys.average_positions, brk)
    assert [r.remedy for r in p.rewrites][:1] == ["guarded-write"], p.notes
    src = p.rewrites[0].source
    assert "    if not torch.compiler.is_compiling() and (counts == 0).sum() != 0:\n        logger.warning(" in src
    assert src.rstrip().endswith("    counts[counts == 0] = 1\n    return emb / counts.unsqueeze(-1)")
    v = verify(toys.average_positions, p.rewrites[0], _sets())  # one set has a zero count, the other none
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 3, 1, [True, True]), v


def test_a_break_on_the_warning_in_the_guard_is_the_same_remedys():
    brk = BreakSite("GB0291", _line(toys.average_positions, "logger.warning"), GB0291)
    assert "guarded-write" in [r.remedy for r in propose(toys.average_positions, brk).rewrites]


def test_a_write_with_another_mask_keeps_its_guard():
    brk = BreakSite("GB0170", _line(toys.clamp_other_mask, "(m > 0).any()"), "Data-dependent branching")
    p = propose_guarded_write(toys.clamp_other_mask, brk)
    assert p.rewrites == [] and not p.fits


def test_paste_in_a_fresh_process_guard():
    brk = BreakSite("GB0170", _line(toys.average_positions, "(counts == 0).sum()"), "Data-dependent branching")
    r = propose_guarded_write(toys.average_positions, brk).rewrites[0]
    call = "toys_logging.average_positions, (torch.randn(2, 3, 4), torch.tensor([[[1, -1], [-1, -1], [2, 3]]] * 2))"
    setup = "from tests.rewrites import toys_logging"
    paste = r.source + "toys_logging.average_positions = average_positions\n"
    assert graphs_in_fresh_process([], "", call, setup) == 3
    assert graphs_in_fresh_process([], "from tests.rewrites.toys_logging import logger\n" + paste, call, setup) == 1
