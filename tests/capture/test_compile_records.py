"""What Dynamo recorded per compile (tlparse's compile pages), on a real capture with recompiles.

A function called with a changing Python int until ``recompile_limit`` (2) is hit: compiles 0/0
and 0/1 make graphs, 0/2 is refused. Checked against torch's own ``TORCH_LOGS=recompiles`` text.
"""

from __future__ import annotations

import logging

import pytest
import torch

import nstviz

pytestmark = pytest.mark.usefixtures("warm_backends")

CODE = '''
import torch
torch._dynamo.config.recompile_limit = 2

def step(x, n):
    y = x * n
    if n > 2:
        y = y + 1
    return y.sum()

cstep = torch.compile(step, backend="aot_eager", dynamic=False)
outs = [cstep(torch.ones(3), i) for i in range(4)]
'''


@pytest.fixture(scope="module")
def report():
    return nstviz.trace_code(CODE, {}, filename="<recompiles>")


def _torch_recompile_log() -> list[str]:
    """What ``TORCH_LOGS=recompiles`` prints for CODE, run plainly under torch."""
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    handler = Keep()
    logger = logging.getLogger("torch._dynamo")
    torch._logging.set_logs(recompiles=True)
    logger.addHandler(handler)
    try:
        torch._dynamo.reset()
        with torch._dynamo.config.patch(recompile_limit=torch._dynamo.config.recompile_limit):  # CODE sets it
            exec(compile(CODE, "<recompiles>", "exec"), {})
    finally:
        logger.removeHandler(handler)
        torch._logging.set_logs()
        torch._dynamo.reset()
    return records


def test_every_compile_names_its_frame_and_why_it_recompiled(report):
    base = report.runs["baseline"]
    assert [(c.tlparse_id, c.function, c.location.file, c.location.line) for c in base.compiles] == [
        ("0/0", "step", "<recompiles>", 5),
        ("0/1", "step", "<recompiles>", 5),
        ("0/2", "step", "<recompiles>", 5),  # the refused compile logs no name: named from its frame
    ]
    first, second, refused = base.compiles
    assert first.guard_failures == () and first.cache_size == 0 and first.guard_count
    assert [(g.compile_id, g.guard, g.code, g.location.line) for g in second.guard_failures] == [("0/0", "n == 0", "y = x * n", 6)]
    # every failing guard, as torch's log lists them (the metrics' recompile_reason keeps only the first)
    assert [(g.compile_id, g.guard) for g in refused.guard_failures] == [("0/1", "n == 1"), ("0/0", "n == 0")]
    assert refused.graph_ids == () and refused.fail_type == "Unsupported" and "recompile_limit" in refused.fail_reason
    assert all(c.compile_time_s is not None for c in base.compiles)
    assert [len(c.graph_ids) > 0 for c in base.compiles] == [True, True, False]


def test_guard_failures_are_what_torch_logs_for_recompiles(report):
    logged = "\n".join(_torch_recompile_log())
    assert "Recompiling function step" in logged
    for c in report.runs["baseline"].compiles:
        for g in c.guard_failures:
            assert f"- {g.compile_id}: {g.guard}" in logged


def test_recompile_limit_chip_says_what_it_means_and_names_the_compile(report):
    chip = next(c for c in report.headline.chips if "recompile limit" in c.text)
    assert (chip.run, chip.compile_id, chip.tone) == ("baseline", "0/2", "bad")
    assert chip.help is not None
    for words in ("step (<recompiles>:5)", "recompile_limit allows (2)", "n == 1", "runs eagerly", "0/2"):
        assert words in chip.help
    again = nstviz.Report.from_json(report.to_json())  # the new fields survive JSON
    assert again.headline == report.headline and again.runs["baseline"].compiles == report.runs["baseline"].compiles

