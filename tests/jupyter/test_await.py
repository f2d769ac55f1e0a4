"""%%nstrace cells may use top-level ``await``, as any notebook cell may (IPython's autoawait)."""

from __future__ import annotations

import asyncio

import torch
from IPython.utils.capture import capture_output

DEFS = """
import asyncio
import torch

def helper(x):
    torch._dynamo.graph_break()
    return x * 2

async def fetch_scale():
    await asyncio.sleep(0.001)
    return 3.0
"""

CELL = """\
%%nstrace --nonstrict helper --name await_report
scale = await fetch_scale()
f = torch.compile(lambda x: helper(x) + scale)
await_out = f(torch.ones(2))
done = await asyncio.gather(fetch_scale(), asyncio.sleep(0, result="slept"))
"""


def test_top_level_await_in_an_nstrace_cell(ip) -> None:
    assert ip.run_cell(DEFS).success
    with capture_output() as captured:
        result = ip.run_cell(CELL)
    assert result.success, (result.error_in_exec, captured.stdout, captured.stderr)
    report = ip.user_ns["await_report"]
    assert [b.gb_id for b in report.runs["baseline"].breaks] == ["GB0025"]
    assert report.runs["nonstrict"].breaks == ()
    assert report.outputs.match is True
    assert torch.equal(ip.user_ns["await_out"], torch.full((2,), 5.0))
    assert ip.user_ns["done"] == [3.0, "slept"]
    assert asyncio.events._get_running_loop() is None  # no loop left set


def test_top_level_await_inside_a_running_loop_like_a_kernel(ip) -> None:
    """In a kernel the kernel's loop runs in this thread while the cell executes: set aside, put back."""
    assert ip.run_cell(DEFS).success

    async def kernel_like():
        loop = asyncio.get_running_loop()
        result = ip.run_cell(CELL)  # synchronous, as ipykernel runs a cell without top-level await
        return result, asyncio.get_running_loop() is loop

    with capture_output():
        result, same_loop = asyncio.run(kernel_like())
    assert result.success, result.error_in_exec
    assert same_loop
    assert ip.user_ns["done"] == [3.0, "slept"]
    assert [b.gb_id for b in ip.user_ns["await_report"].runs["baseline"].breaks] == ["GB0025"]
