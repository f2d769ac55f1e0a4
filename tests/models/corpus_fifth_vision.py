"""Fifth held-out set, vision part: filled in by the scan of 2026-12-05 (see docs/corpus-fifth-scan-vision.md).

Families none of the earlier corpora touch: Gemma 4's vision tower with its position-pooled soft tokens
(vision-language), Granite Docling's tiled page encoder with DeepStack features (document vision-language) and GLPN's
depth estimation with its scale-invariant log loss (depth / dense prediction). They were chosen only by novelty (no
job of the family in an earlier corpus, not in the earlier scans' lists) and by breaking in their own code, without
reading or running the advisor. :data:`JOBS` break, each at least once in its own family's code. Same shape as
:mod:`tests.models.corpus_fourth_vision`: a :class:`~tests.models.corpus.Job` builds its model offline from a tiny
config (random weights, nothing downloaded; :meth:`~tests.models.corpus.Job.make` seeds torch, numpy and random
with 0 before ``build``) and returns it with its keyword inputs. Each job was measured with
``python -m tests.models.explain_check_fifth JOB`` (``OMP_NUM_THREADS=1``) on torch 2.13 / transformers 5.25.0,
twice in separate processes, with the same counts both times; figures and break sites are in
``docs/corpus-fifth-scan-vision.md``.
"""

from __future__ import annotations

from typing import Any

import torch

from tests.models.corpus import Job, _ids, _mode, _pick

__all__ = ["JOBS", "MEASURABLE", "NEAR_COPIES", "NOT_BREAKING", "NOT_BUILT"]


def _glpn(train: bool):
    def build():
        import transformers as T

        cfg = T.GLPNConfig(num_encoder_blocks=4, depths=[1, 1, 1, 1], sr_ratios=[4, 2, 1, 1],
                           hidden_sizes=[8, 16, 16, 16], num_attention_heads=[1, 1, 2, 2], mlp_ratios=[2, 2, 2, 2],
                           drop_path_rate=0.0, decoder_hidden_size=16)
        model = _mode(T.GLPNForDepthEstimation(cfg), train)
        # a 64x64 image; the depth map has a zero (invalid) border that the scale-invariant log loss masks out
        depth = 1.0 + 5.0 * torch.rand(1, 64, 64)
        depth[:, :8] = 0
        depth[:, :, -8:] = 0
        inputs: dict[str, Any] = {"pixel_values": torch.randn(1, 3, 64, 64)}
        if train:
            inputs["labels"] = depth
        return model, inputs

    return build


def _patch_grid(width: int, height: int, total: int) -> torch.Tensor:
    """(x, y) positions of a ``width`` x ``height`` patch grid, row by row, padded with (-1, -1) to ``total``."""
    ys, xs = torch.meshgrid(torch.arange(height), torch.arange(width), indexing="ij")
    pos = torch.stack([xs.flatten(), ys.flatten()], dim=-1)
    return torch.cat([pos, torch.full((total - width * height, 2), -1)])


def _gemma4(train: bool):
    def build():
        import transformers as T

        vision = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                      num_key_value_heads=2, head_dim=8, patch_size=4, pooling_kernel_size=2,
                      position_embedding_size=16)
        text = dict(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                    num_attention_heads=2, num_key_value_heads=1, head_dim=8, max_position_embeddings=128,
                    layer_types=["sliding_attention", "full_attention"], sliding_window=8,
                    vocab_size_per_layer_input=100, hidden_size_per_layer_input=8, enable_moe_block=False)
        cfg = T.Gemma4Config(text_config=text, vision_config=vision, audio_config=None, image_token_id=99,
                             boi_token_id=97, eoi_token_id=98, video_token_id=96, audio_token_id=95,
                             boa_token_id=94, eoa_token_index=93)
        model = _mode(T.Gemma4ForConditionalGeneration(cfg), train)
        # two images of 4x4 and 4x2 patches (patch 4), padded to 16 patches each; pooled 2x2 -> 4 + 2 image tokens
        pos = torch.stack([_patch_grid(4, 4, 16), _patch_grid(4, 2, 16)])
        ids = _ids(14, 90)
        ids[0, 2:8] = 99
        inputs: dict[str, Any] = {"input_ids": ids, "pixel_values": torch.rand(2, 16, 3 * 4 * 4),
                                  "image_position_ids": pos}
        if train:
            inputs["labels"] = ids.clone()
        return model, inputs

    return build


def _granite_docling(train: bool):
    def build():
        import transformers as T

        vision = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2,
                      image_size=32, patch_size=4, scale_factor=4, out_hidden_size=16,
                      deepstack_visual_indexes=[0, 1], use_fine_route=False)
        text = dict(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                    num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=128, pad_token_id=0,
                    bos_token_id=1, eos_token_id=2)
        cfg = T.GraniteDoclingConfig(text_config=text, vision_config=vision, image_token_id=99, pad_token_id=0)
        model = _mode(T.GraniteDoclingForConditionalGeneration(cfg), train)
        # one page as 3 tile slots of 32x32 (patch 4, pixel shuffle 4 -> 4 tokens a tile), the last one padding:
        # 2 real tiles -> 8 image tokens
        tiles = torch.tensor([[True, True, False]])
        ids = _ids(16, 90)
        ids[0, 3:11] = 99
        inputs: dict[str, Any] = {"input_ids": ids, "pixel_values": torch.randn(1, 3, 3, 32, 32),
                                  "pixel_attention_mask": tiles}
        if train:
            inputs["labels"] = ids.clone()
        return model, inputs

    return build


_ALL: dict[str, Job] = {j.name: j for j in (
    Job("glpn_depth_train", _glpn(True)),
    Job("glpn_depth_eval", _glpn(False)),
    Job("gemma4_vlm_train", _gemma4(True)),
    Job("gemma4_vlm_eval", _gemma4(False)),
    Job("granite_docling_train", _granite_docling(True)),
    Job("granite_docling_eval", _granite_docling(False)),
)}

JOBS: dict[str, Job] = _pick(
    _ALL, "gemma4_vlm_train", "gemma4_vlm_eval", "granite_docling_train", "granite_docling_eval", "glpn_depth_train",
)
"""The breaking jobs, each breaking at least once in its own family's code: Gemma 4's vision model stripping the
pooled padding tokens (``hidden_states[pooler_mask]``, boolean-mask indexing) and its ``get_image_features`` split
(``.tolist()`` split sizes from the non-padding patch counts); Granite Docling's tile selection
(``pixel_values[pixel_attention_mask]``), its per-sample split (``.tolist()`` split sizes) and its text model's
DeepStack injection (``hidden_states[visual_pos_masks, :]``); GLPN's scale-invariant log loss (``target[valid_mask]``,
boolean-mask indexing). Gemma 4 and Granite Docling also break at their own placeholder-mask checks (the LLaVA /
Idefics3 ``torch_compilable_check`` pattern). Train and eval of Gemma 4 and of Granite Docling give the same counts
and sites (the loss is the shared causal-LM loss). Caveats in ``docs/corpus-fifth-scan-vision.md``."""

NEAR_COPIES: dict[str, Job] = {}
"""None found."""

NOT_BREAKING: dict[str, Job] = _pick(_ALL, "glpn_depth_eval")
"""Measured with 0 graph breaks (explain: 1 graph) on torch 2.13 / transformers 5.25: not in :data:`JOBS`. GLPN
without labels (its only data-dependent code is the loss)."""

NOT_BUILT: dict[str, str] = {
    "pe_audio_video": "looked at, not built for time: its own `if (audio_lengths == ...).all()` alignment branch "
                      "needs a text model and PE audio and PE video encoder configs on top of the joint encoder",
    "layoutlmv2": "not built: no data-dependent forward code of its own by grep, and its visual backbone is "
                  "detectron2's (not installed)",
    "kimi_k25 / muse_glimmer / minimax_m3_vl / hy_v4_vl / unlimited_ocr": "not built: MoE text models (expert "
                                                                          "routing), excluded",
    "minicpmv4_7 / minicpm_ocr / glm46v / cosmos3_edge / cosmos3_omni / llava_onevision1_5 / lfm3_vl / "
    "hyperclovax_vision_v2 / modernvbert": "not built: their data-dependent code is modular from used families "
                                           "(MiniCPM-V 4.6, GLM-4V, LFM2-VL, SmolVLM / Idefics3) or the Qwen2-VL / "
                                           "Qwen3-VL vision-attention split and get_rope_index idioms",
    "sam_hq / edgetam / sam3_tracker / sam2_video / edgetam_video / sam3_video": "not built: SAM / SAM2 / SAM3 "
                                                                                 "derivatives (used families); "
                                                                                 "the video trackers' .tolist() "
                                                                                 "code runs in inference "
                                                                                 "post-processing",
}
"""Tried and dropped, or not built, with the reason."""

MEASURABLE: dict[str, Job] = dict(_ALL)
"""Every job this file defines, the non-breaking ones included."""
