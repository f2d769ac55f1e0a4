"""A corpus of real Hugging Face transformers jobs that break under ``torch.compile``.

Every job builds its model offline from a tiny config (random weights, fixed seed) and returns
the model and its keyword inputs. ``heavy`` jobs take noticeably longer to compile; tests that
run them are marked ``slow``. Expected outcomes are measured by ``tests/models/measure.py`` and
written down in ``tests/models/test_corpus_*.py``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

__all__ = ["JOBS", "Job", "merge_corpora", "seed_all"]


def seed_all(seed: int = 0) -> None:
    """Seed torch, numpy and random (models draw from all three)."""
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)


@dataclass(frozen=True)
class Job:
    """One model in one mode with its inputs."""

    name: str
    build: Callable[[], tuple[torch.nn.Module, dict[str, Any]]]
    heavy: bool = False

    def make(self) -> tuple[torch.nn.Module, dict[str, Any]]:
        """The model (seeded, in its mode) and its inputs."""
        seed_all(0)
        model, inputs = self.build()
        return model, inputs


def _ids(n: int, vocab: int = 100) -> torch.Tensor:
    return torch.randint(0, vocab, (1, n))


def _mode(model: torch.nn.Module, train: bool) -> torch.nn.Module:
    return model.train() if train else model.eval()


def _boxes(n: int, classes: int) -> dict[str, torch.Tensor]:
    """``n`` random boxes (cx, cy, w, h in [0.2, 0.8]) with their class labels, one image's targets."""
    centers = 0.3 + 0.4 * torch.rand(n, 2)
    sizes = 0.1 + 0.2 * torch.rand(n, 2)
    return {"class_labels": torch.randint(0, classes, (n,)), "boxes": torch.cat([centers, sizes], dim=1)}


def _pick(jobs: dict[str, Job], *names: str) -> dict[str, Job]:
    """The jobs of ``jobs`` named ``names``, in that order."""
    return {n: jobs[n] for n in names}


def merge_corpora(*parts: Any) -> tuple[dict[str, Job], dict[str, Job], dict[str, Job], dict[str, str], dict[str, Job]]:
    """A held-out corpus made of ``parts`` (modules of the same shape, e.g. its vision and text files).

    Returns ``(JOBS, NEAR_COPIES, NOT_BREAKING, NOT_BUILT, MEASURABLE)``: the breaking jobs, each
    breaking at least once in its own family's code; breaking jobs whose every break is at code
    copied from a family already used; jobs measured with 0 graph breaks; jobs tried and dropped,
    with the reason; and every job the parts define, the non-breaking ones included.
    """
    names = ("JOBS", "NEAR_COPIES", "NOT_BREAKING", "NOT_BUILT", "MEASURABLE")
    merged = [{k: v for part in parts for k, v in getattr(part, name).items()} for name in names]
    return merged[0], merged[1], merged[2], merged[3], merged[4]


def _bigbird(train: bool):
    def build():
        import transformers as T

        cfg = T.BigBirdConfig(
            vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
            intermediate_size=32, attention_type="block_sparse", block_size=2, num_random_blocks=1,
            max_position_embeddings=64, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        )
        model = T.BigBirdModel(cfg)
        return (model.train() if train else model.eval()), {"input_ids": _ids(32)}

    return build


def _speech(kind: str, train: bool):
    def build():
        import transformers as T

        config_cls, model_cls = {
            "wav2vec2": (T.Wav2Vec2Config, T.Wav2Vec2Model),
            "hubert": (T.HubertConfig, T.HubertModel),
        }[kind]
        cfg = config_cls(
            hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
            conv_dim=(8, 8), conv_stride=(4, 2), conv_kernel=(8, 4), num_conv_pos_embeddings=4,
            num_conv_pos_embedding_groups=2, mask_time_prob=0.5, mask_time_length=2,
        )
        model = model_cls(cfg)
        return (model.train() if train else model.eval()), {"input_values": torch.randn(1, 800)}

    return build


def _vits():
    import transformers as T

    cfg = T.VitsConfig(
        vocab_size=40, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, ffn_dim=32, flow_size=8,
        spectrogram_bins=9, upsample_initial_channel=16, upsample_rates=[2, 2], upsample_kernel_sizes=[4, 4],
        resblock_kernel_sizes=[3], resblock_dilation_sizes=[[1, 3]], prior_encoder_num_flows=1,
        prior_encoder_num_wavenet_layers=1, posterior_encoder_num_wavenet_layers=1,
        duration_predictor_num_flows=1, duration_predictor_filter_channels=16, depth_separable_num_layers=1,
        window_size=2,
    )
    return T.VitsModel(cfg).eval(), {"input_ids": _ids(8, 40)}


def _switch(train: bool = False):
    def build():
        import transformers as T

        cfg = T.SwitchTransformersConfig(
            vocab_size=100, d_model=16, d_kv=8, d_ff=32, num_layers=1, num_decoder_layers=1, num_heads=2,
            num_experts=4, expert_capacity=4, num_sparse_encoder_layers=1, num_sparse_decoder_layers=1,
        )
        model = T.SwitchTransformersModel(cfg)
        return (model.train() if train else model.eval()), {"input_ids": _ids(8), "decoder_input_ids": _ids(4)}

    return build


def _nllb_moe(train: bool = False):
    def build():
        import transformers as T

        cfg = T.NllbMoeConfig(
            vocab_size=100, d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
            decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, num_experts=4, expert_capacity=4,
            encoder_sparse_step=1, decoder_sparse_step=1, max_position_embeddings=64,
        )
        model = T.NllbMoeModel(cfg)
        return (model.train() if train else model.eval()), {"input_ids": _ids(8), "decoder_input_ids": _ids(4)}

    return build


def _fastspeech2():
    import transformers as T

    cfg = T.FastSpeech2ConformerConfig(
        hidden_size=16, vocab_size=40, num_mel_bins=8, encoder_layers=1, decoder_layers=1,
        encoder_linear_units=32, decoder_linear_units=32, speech_decoder_postnet_layers=1,
        speech_decoder_postnet_units=16, duration_predictor_layers=1, duration_predictor_channels=16,
        energy_predictor_layers=1, energy_predictor_channels=16, pitch_predictor_layers=1,
        pitch_predictor_channels=16, encoder_kernel_size=3, decoder_kernel_size=3,
    )
    return T.FastSpeech2ConformerModel(cfg).eval(), {"input_ids": _ids(8, 40)}


def _longformer():
    import transformers as T

    cfg = T.LongformerConfig(
        vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
        attention_window=[4], max_position_embeddings=64,
    )
    return T.LongformerModel(cfg).eval(), {"input_ids": _ids(8)}


def _reformer():
    import transformers as T

    cfg = T.ReformerConfig(
        vocab_size=100, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, attn_layers=["local", "lsh"],
        axial_pos_embds=False, feed_forward_size=32, attention_head_size=8, max_position_embeddings=64,
        local_attn_chunk_length=4, lsh_attn_chunk_length=4, num_buckets=2, is_decoder=False,
    )
    return T.ReformerModel(cfg).eval(), {"input_ids": _ids(8)}


def _longt5():
    import transformers as T

    cfg = T.LongT5Config(
        vocab_size=100, d_model=16, d_kv=8, d_ff=32, num_layers=1, num_decoder_layers=1, num_heads=2,
        encoder_attention_type="transient-global", local_radius=2, global_block_size=4,
    )
    return T.LongT5Model(cfg).eval(), {"input_ids": _ids(16), "decoder_input_ids": _ids(4)}


def _siglip2():
    import transformers as T

    cfg = T.Siglip2VisionConfig(
        hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, num_patches=16,
        patch_size=2, num_channels=3,
    )
    inputs = {
        "pixel_values": torch.randn(1, 16, 12),
        "pixel_attention_mask": torch.ones(1, 16, dtype=torch.long),
        "spatial_shapes": torch.tensor([[4, 4]]),
    }
    return T.Siglip2VisionModel(cfg).eval(), inputs


JOBS: dict[str, Job] = {
    j.name: j
    for j in (
        Job("bigbird_eval", _bigbird(False)),
        Job("bigbird_train", _bigbird(True)),
        Job("wav2vec2_train", _speech("wav2vec2", True)),
        Job("hubert_train", _speech("hubert", True)),
        Job("vits_eval", _vits),
        Job("switch_moe_eval", _switch(False), heavy=True),
        Job("switch_moe_train", _switch(True), heavy=True),
        Job("nllb_moe_eval", _nllb_moe(False), heavy=True),
        Job("nllb_moe_train", _nllb_moe(True), heavy=True),
        Job("fastspeech2_eval", _fastspeech2),
        Job("longformer_eval", _longformer),
        Job("reformer_eval", _reformer),
        Job("longt5_eval", _longt5),
        Job("siglip2_eval", _siglip2),
    )
}
