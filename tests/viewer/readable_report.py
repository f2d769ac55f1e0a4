"""A small Report shaped like the GPT-2 runs of the issue "The view a person sees".

Built from the model classes on top of the recorded ``advisor.report.json`` fixture (no torch
compile): nine baseline breaks with long reasons (the GPT-2 run's kinds), an advisor attempt
that still has breaks of its own (so a badge that sums every run's breaks over-counts), an
IMPROVED candidate ("9 -> 3 graphs"), ~45 ``config.*`` outputs compared before the tensors,
wall times and a timing table. Used by ``tests/viewer/test_readable.py``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from nstviz.passes.break_diff import diff_breaks
from nstviz.report import (
    Break,
    Location,
    OutputDetail,
    Report,
)
from nstviz.report.model import RunCounts, break_id
from nstviz.report.timing import CallTiming, RunTiming

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "advisor.report.json"

# (gb_id, gb_type): the kinds of break a 2-layer GPT-2 run with --auto shows
REASONS = [
    ("GB0025", "Call to `torch._dynamo.graph_break()`"),
    ("GB0007", "Attempted to call function marked as skipped"),
    ("GB0097", "Missing tp_iternext"),
    ("GB0046", "Unsupported Tensor.backward() call"),
    ("GB0170", "Data dependent operator"),
    ("GB0142", "Unsupported context manager"),
    ("GB0036", "Dynamic shape operator (no meta kernel) encountered while tracing"),
    ("GB0111", "Unsupported method call on a user-defined object"),
    ("GB0129", "Failed to trace builtin operator `getattr` with argument types"),
]
FUNCTION = "GPT2LMHeadModel.forward"
LONG_URL = "https://pytorch.org/docs/main/compile/programming_model.recompilation.html#dealing-with-recompilations"
CONFIG_KEYS = [f"return.config.{k}" for k in (
    "vocab_size n_positions n_embd n_layer n_head n_inner activation_function resid_pdrop embd_pdrop "
    "attn_pdrop layer_norm_epsilon initializer_range summary_type summary_use_proj summary_activation "
    "summary_first_dropout summary_proj_to_labels scale_attn_weights use_cache bos_token_id eos_token_id "
    "scale_attn_by_inverse_layer_idx reorder_and_upcast_attn return_dict output_hidden_states "
    "output_attentions torchscript dtype tie_word_embeddings chunk_size_feed_forward is_encoder_decoder "
    "is_decoder cross_attention_hidden_size add_cross_attention tie_encoder_decoder architectures "
    "finetuning_task id2label label2id tokenizer_class prefix pad_token_id sep_token_id "
    "decoder_start_token_id problem_type"
).split()]


def _breaks(proto: Break, n: int, file: str) -> tuple[Break, ...]:
    out = []
    for k, (gb, kind) in enumerate(REASONS[:n]):
        loc = Location(file=file, line=10 + k, function=f"block_{k}")
        hints = (f"See {LONG_URL} for what to do.",) if k == 0 else proto.hints
        out.append(dataclasses.replace(
            proto, id=break_id(loc, gb, kind), gb_id=gb, gb_type=kind, reason=kind, location=loc,
            stack=(loc,), hints=hints, detail=f"{kind}\n  Explanation: long text\n  Hint: {LONG_URL}",
            graph_before=None, graph_after=None, splits=(), compile_ids=()))
    return tuple(out)


def _timing(graphs: int, med: float) -> RunTiming:
    call = CallTiming(median_s=med, q1_s=med * 0.9, q3_s=med * 1.1, min_s=med * 0.8, max_s=med * 1.3, calls=20)
    eager = CallTiming(median_s=0.0123, q1_s=0.012, q3_s=0.013, min_s=0.0118, max_s=0.0140, calls=20)
    return RunTiming(graphs=graphs, first_call_s=6.52, compile_s=5.91, steady=call, eager=eager)


def readable_report() -> Report:
    """The Report described in the module docstring (validated)."""
    base = Report.load_json(FIXTURE)
    runs = dict(base.runs)
    proto = runs["baseline"].breaks[0]
    file = proto.location.file
    runs["baseline"] = dataclasses.replace(runs["baseline"], breaks=_breaks(proto, 9, file), wall_time_s=6.52,
                                           timing=_timing(10, 0.0211))
    runs["attempt-1"] = dataclasses.replace(runs["attempt-1"], breaks=_breaks(proto, 3, file), wall_time_s=3.1)
    runs["nonstrict"] = dataclasses.replace(runs["nonstrict"], wall_time_s=4.75, timing=_timing(3, 0.0154))
    for name, run in runs.items():  # a long function name, as GPT-2's graphs have
        graphs = tuple(dataclasses.replace(g, function=FUNCTION) for g in run.graphs)
        runs[name] = dataclasses.replace(run, graphs=graphs)
    counts = dict(base.counts)
    counts["baseline"] = dataclasses.replace(counts["baseline"], breaks=9, break_hits=9, graph_breaks=9)
    counts["attempt-1"] = dataclasses.replace(counts["attempt-1"], breaks=3, break_hits=3, graph_breaks=3)
    tensors = [OutputDetail(path="return.logits", match=True, max_abs_diff=1.9e-6, max_rel_diff=3.1e-5,
                            shape="[2, 32, 512]", dtype="f32"),
               OutputDetail(path="return.hidden", match=True, max_abs_diff=9.5e-7, max_rel_diff=2.2e-6,
                            shape="[2, 32, 64]", dtype="f32")]
    details = tuple([OutputDetail(path=k, match=True, max_abs_diff=0.0, max_rel_diff=0.0) for k in CONFIG_KEYS]
                    + tensors)
    cmp = dataclasses.replace(base.outputs.comparisons[0], details=details)
    outputs = dataclasses.replace(base.outputs, details=details, comparisons=(cmp,))
    cands = tuple(dataclasses.replace(c, error="9 -> 3 graphs", breaks_before=9, breaks_after=3)
                  for c in base.candidates)
    assert isinstance(counts["baseline"], RunCounts)
    report = dataclasses.replace(base, runs=runs, counts=counts, outputs=outputs, candidates=cands,
                                 diff=diff_breaks(runs["baseline"], runs["nonstrict"]))
    report.validate()
    return report
