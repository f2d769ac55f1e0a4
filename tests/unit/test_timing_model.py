"""The timing model (nstviz.report.timing): statistics, ranking, verdicts, text, JSON codec.

Torch-free: these tests build the figures by hand.
"""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from nstviz.report._codec import _decode, _encode
from nstviz.report.timing import (
    CallTiming,
    RunTiming,
    best_index,
    compare_steady,
    format_call,
    format_seconds,
    format_timing,
    rank_key,
    ranked,
)


def _call(median: float, spread: float = 0.0, calls: int = 20) -> CallTiming:
    return CallTiming(
        median_s=median, q1_s=median - spread, q3_s=median + spread, min_s=median - 2 * spread,
        max_s=median + 3 * spread, calls=calls, warmup=2,
    )


def _run(graphs: int, median: float | None, compile_s: float | None = 1.0) -> RunTiming:
    return RunTiming(graphs=graphs, first_call_s=2.0, compile_s=compile_s, steady=None if median is None else _call(median))


def test_statistics_of_samples():
    t = CallTiming.of([5.0, 1.0, 3.0, 2.0, 4.0], warmup=3)
    assert (t.min_s, t.q1_s, t.median_s, t.q3_s, t.max_s) == (1.0, 2.0, 3.0, 4.0, 5.0)
    assert t.spread_s == 1.0
    assert (t.calls, t.warmup) == (5, 3)


def test_one_outlier_moves_neither_median_nor_spread_much():
    steady = [1.0e-3] * 19
    with_outlier = CallTiming.of([*steady, 0.5])
    assert with_outlier.median_s == 1.0e-3
    assert with_outlier.spread_s == 0.0
    assert with_outlier.max_s == 0.5


def test_single_sample():
    t = CallTiming.of([0.25])
    assert (t.min_s, t.q1_s, t.median_s, t.q3_s, t.max_s, t.calls) == (0.25, 0.25, 0.25, 0.25, 0.25, 1)


@pytest.mark.parametrize("samples", [[], [1.0, -0.1], [float("nan")], [float("inf")]])
def test_bad_samples_are_refused(samples):
    with pytest.raises(ValueError):
        CallTiming.of(samples)


def test_rank_fewest_graphs_first_then_least_time():
    items = [
        ("two graphs, fast", 2, _run(2, 0.001)),
        ("one graph, slow", 1, _run(1, 0.010)),
        ("one graph, fast", 1, _run(1, 0.005)),
        ("one graph, untimed", 1, None),
        ("one graph, no steady state", 1, _run(1, None)),
        ("graphs unknown", None, _run(0, 0.0001)),
    ]
    assert ranked(items) == [
        "one graph, fast",
        "one graph, slow",
        "one graph, no steady state",  # its compile time is known: before the untimed one
        "one graph, untimed",
        "two graphs, fast",
        "graphs unknown",
    ]


def test_rank_ties_on_time_go_to_the_lesser_compile_time():
    a, b = _run(1, 0.005, compile_s=3.0), _run(1, 0.005, compile_s=2.0)
    assert rank_key(1, b) < rank_key(1, a)
    assert rank_key(1, _run(1, 0.005, compile_s=None)) > rank_key(1, a)
    assert rank_key(None) == (math.inf, math.inf, math.inf)


def test_best_index_fewest_graphs_then_measurably_faster_else_latest():
    slow, fast = _run(1, 0.010), RunTiming(
        graphs=1, first_call_s=2.0, compile_s=1.0, steady=_call(0.005, 0.0001)
    )
    noisy = RunTiming(graphs=1, first_call_s=2.0, compile_s=1.0, steady=_call(0.009, 0.002))
    assert best_index([(2, _run(2, 0.001)), (1, slow)]) == 1  # fewer graphs beat any time
    assert best_index([(1, fast), (1, slow)]) == 0  # an earlier set measurably faster wins
    assert best_index([(1, noisy), (1, slow)]) == 1  # inside the noise: the latest
    assert best_index([(1, None), (1, None)]) == 1  # untimed: the latest
    assert best_index([(None, None), (3, None)]) == 1
    with pytest.raises(ValueError):
        best_index([])


def test_derived_texts_are_the_formatted_lines():
    timing = _run(2, 0.004)
    assert timing.text == format_timing(timing)
    assert timing.compile_text == format_seconds(1.0)
    assert timing.steady is not None and timing.steady.text == format_call(timing.steady)
    assert _run(1, None, compile_s=None).compile_text == format_seconds(2.0)  # the first call's


def test_compare_steady_needs_separate_quartiles():
    before = _call(10e-3, 1e-3)
    assert compare_steady(before, _call(5e-3, 1e-3)) == "faster"
    assert compare_steady(before, _call(20e-3, 1e-3)) == "slower"
    assert compare_steady(before, _call(9.5e-3, 1e-3)) == "same"  # inside the noise
    assert compare_steady(before, before) == "same"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(4.213, "4.21 s"), (0.0123, "12.3 ms"), (0.000051, "51.0 µs"), (12.0, "12.0 s"), (0.0, "0 µs"), (123.4, "123 s")],
)
def test_format_seconds(seconds, text):
    assert format_seconds(seconds) == text


def test_format_call_and_timing():
    steady = CallTiming(median_s=0.0123, q1_s=0.0119, q3_s=0.0127, min_s=0.011, max_s=0.02, calls=20)
    eager = CallTiming(median_s=0.0151, q1_s=0.015, q3_s=0.0152, min_s=0.015, max_s=0.016, calls=20)
    assert format_call(steady) == "12.3 ms ± 0.4 (median of 20)"
    timing = RunTiming(graphs=1, first_call_s=5.0, compile_s=4.2, steady=steady, eager=eager)
    assert format_timing(timing) == "12.3 ms ± 0.4 (median of 20), eager 15.1 ms; compile 4.20 s; 1 graph"
    assert timing.speedup == pytest.approx(0.0151 / 0.0123)


def test_format_timing_says_what_was_not_measured_and_recompiles():
    timing = RunTiming(graphs=3, first_call_s=0.8, recompiles=2)
    assert format_timing(timing) == "first call 800 ms; 3 graphs; 2 recompiles while timing"
    assert timing.speedup is None
    eager_only = RunTiming(graphs=1, first_call_s=0.5, compile_s=0.4, eager=_call(0.002, 0.0001, calls=7))
    assert format_timing(eager_only) == "eager 2.00 ms ± 0.10 (median of 7); compile 400 ms; 1 graph"


def test_json_round_trip_through_the_report_codec():
    timing = RunTiming(
        graphs=2, first_call_s=1.5, compile_s=1.25, steady=_call(0.004, 0.0005), eager=_call(0.006, 0.0002),
        recompiles=1, backend="aot_eager", synchronized=False, budget_s=1.0,
    )
    data = _encode(timing)
    assert data["steady"]["median_s"] == 0.004
    assert "spread_s" not in data["steady"]  # derived, not stored
    assert _decode(RunTiming, data, "$") == timing
    assert _decode(RunTiming, _encode(_run(1, None, compile_s=None)), "$") == _run(1, None, compile_s=None)


def test_the_model_module_imports_no_torch():
    code = "import sys, nstviz.report.timing; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
