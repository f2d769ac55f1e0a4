"""Real transformers models with graph breaks, built offline from tiny configs."""

from __future__ import annotations

import inspect

import pytest
import torch

import nstviz
from tests.helpers import digest

transformers = pytest.importorskip("transformers")


def _line_of(module, code: str) -> int:
    lines, _ = inspect.findsource(module)
    return next(i + 1 for i, line in enumerate(lines) if line.strip() == code)


def test_longformer_item_break_remains_under_nonstrict():
    from transformers import LongformerConfig, LongformerModel
    from transformers.models.longformer import modeling_longformer as ml

    torch.manual_seed(0)
    cfg = LongformerConfig(
        vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, attention_window=[4], max_position_embeddings=64,
    )
    model = ml.LongformerModel(cfg).eval()
    assert isinstance(model, LongformerModel)
    ids = torch.randint(0, 100, (1, 8))
    report = nstviz.compare(model, ids, nonstrict=["LongformerSelfAttention._sliding_chunks_query_key_matmul"],
                            **{})
    digest.check_consistent(report)
    base = report.runs["baseline"]
    code = "is_global_attn = is_index_global_attn.flatten().any().item()"
    assert digest.breaks(base) == [("GB0124", "modeling_longformer.py", _line_of(ml, code), "forward", 2, False)]
    assert base.breaks[0].location.code == code
    assert digest.dynamo_graphs(base) == 4 and report.counts["baseline"].aten_ops > 300
    # the .item() break is data-dependent: nonstrict_trace of another helper does not remove it
    assert [b.gb_id for b in report.diff.remaining] == ["GB0124"]
    assert report.outputs.match is True
    assert ml.__file__ in report.sources


def test_reformer_data_dependent_breaks():
    from transformers import ReformerConfig
    from transformers.models.reformer import modeling_reformer as mr

    torch.manual_seed(0)
    cfg = ReformerConfig(
        vocab_size=100, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, attn_layers=["local", "lsh"],
        axial_pos_embds=False, feed_forward_size=32, attention_head_size=8, max_position_embeddings=64,
        local_attn_chunk_length=4, lsh_attn_chunk_length=4, num_buckets=2, is_decoder=False,
    )
    model = mr.ReformerModel(cfg).eval()
    ids = torch.randint(0, 100, (1, 8))
    report = nstviz.compare(model, ids)
    digest.check_consistent(report)
    base = report.runs["baseline"]
    got = [(b.gb_id, b.location.function, b.location.code, b.count) for b in base.breaks]
    assert got == [
        ("GB0170", "forward", "input_shape[-1] % least_common_mult_chunk_length != 0", 1),
        ("GB0170", "forward", "if must_pad_to_match_chunk_length:", 1),
        ("GB0034", "backward_pass", "assert self.training, (", 2),
        ("GB0170", "forward", "if must_pad_to_match_chunk_length:", 1),
    ]
    assert base.breaks[0].location.line == _line_of(mr, "input_shape[-1] % least_common_mult_chunk_length != 0")
    assert digest.dynamo_graphs(base) == 5
    assert all(b.hints for b in base.breaks if b.gb_id == "GB0170")
