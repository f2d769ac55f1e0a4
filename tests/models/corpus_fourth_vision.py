"""Fourth held-out set, vision part: filled in by the scan of 2026-12-05 (see docs/corpus-fourth-scan.md).

Families none of the earlier corpora touch: HunYuan-VL's variable-resolution vision tower and per-image merger
(vision-language), SAM 3's promptable concept segmentation (DETR-style detector with box-relative position bias,
text prompt) and MiniCPM-V 4.6's packed NaViT vision tower with its window-attention ViT merger and per-image
token merger (vision-language). :data:`JOBS` break, each at least once in its own family's code; there are no
near copies or non-breaking jobs. Same shape as :mod:`tests.models.corpus_third_vision`: a
:class:`~tests.models.corpus.Job` builds its model offline from a tiny config (random weights, nothing downloaded;
:meth:`~tests.models.corpus.Job.make` seeds torch, numpy and random with 0 before ``build``) and returns it with its
keyword inputs. Each job was measured with ``python -m tests.models.explain_check_fourth JOB``
(``OMP_NUM_THREADS=1``) on torch 2.13 / transformers 5.25.0, twice in separate processes, with the same counts both
times; figures and break sites are in ``docs/corpus-fourth-scan.md``.
"""

from __future__ import annotations

from typing import Any

import torch

from tests.models.corpus import Job, _ids, _mode, _pick

__all__ = ["JOBS", "MEASURABLE", "NEAR_COPIES", "NOT_BREAKING", "NOT_BUILT"]


def _hunyuan_vl(train: bool):
    def build():
        import transformers as T

        vision = dict(hidden_size=16, intermediate_size=32, num_attention_heads=2, num_hidden_layers=1,
                      out_hidden_size=16, patch_size=4, spatial_merge_size=2, text_hidden_size=16,
                      max_image_size=64, min_image_size=16)
        text = dict(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                    num_attention_heads=2, num_key_value_heads=1, head_dim=8, max_position_embeddings=128,
                    rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1]})
        cfg = T.HunYuanVLConfig(vision_config=vision, text_config=text, image_token_id=99, im_start_id=97,
                                im_end_id=98, im_newline_id=96)
        model = _mode(T.HunYuanVLForConditionalGeneration(cfg), train)
        # two images of 4x4 and 4x6 patches (patch 4), merged 2x2 -> 2x2 and 2x3 grids, one newline token per
        # row and a begin / end token: 2 * 3 + 2 = 8 and 2 * 4 + 2 = 10 image tokens
        grid = torch.tensor([[1, 4, 4], [1, 4, 6]])
        ids = _ids(26, 90)
        ids[0, 2:10] = 99
        ids[0, 12:22] = 99
        mm = (ids == 99).int()
        inputs: dict[str, Any] = {"input_ids": ids, "pixel_values": torch.randn(40, 3 * 4 * 4),
                                  "image_grid_thw": grid, "mm_token_type_ids": mm}
        if train:
            inputs["labels"] = ids.clone()
        return model, inputs

    return build


def _sam3():
    import transformers as T

    vit = dict(model_type="sam3_vit_model", hidden_size=16, intermediate_size=32, num_hidden_layers=2,
               num_attention_heads=2, image_size=56, patch_size=14, window_size=2, global_attn_indexes=[1],
               pretrain_image_size=28)
    vision = dict(backbone_config=vit, fpn_hidden_size=16, backbone_feature_sizes=[[16, 16], [8, 8], [4, 4]])
    text = dict(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                max_position_embeddings=16, projection_dim=16, bos_token_id=1, eos_token_id=2, pad_token_id=0)
    small = dict(hidden_size=16, num_layers=1, num_attention_heads=2, intermediate_size=32)
    cfg = T.Sam3Config(vision_config=vision, text_config=text, geometry_encoder_config=small,
                       detr_encoder_config=small, detr_decoder_config=dict(small, num_queries=4),
                       mask_decoder_config=dict(hidden_size=16, num_attention_heads=2))
    # a 56x56 image (a 4x4 patch grid) with a 6-token text prompt, no box prompt
    return T.Sam3Model(cfg).eval(), {"pixel_values": torch.randn(1, 3, 56, 56), "input_ids": _ids(6, 90),
                                     "attention_mask": torch.ones(1, 6, dtype=torch.long)}


def _minicpmv4_6(train: bool):
    def build():
        import transformers as T

        vision = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2,
                      image_size=32, patch_size=4, insert_layer_id=0)
        text = dict(model_type="qwen3_5_text", vocab_size=100, hidden_size=16, intermediate_size=32,
                    num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, head_dim=8,
                    layer_types=["full_attention"], max_position_embeddings=128)
        cfg = T.MiniCPMV4_6Config(vision_config=vision, text_config=text, image_token_id=99, insert_layer_id=0)
        model = _mode(T.MiniCPMV4_6ForConditionalGeneration(cfg), train)
        # two images of 8x8 and 8x4 patches (patch 4), packed along the width: ViT merger 2x2 then merger 2x2
        # -> 2x2 and 2x1 = 4 + 2 image tokens
        sizes = torch.tensor([[8, 8], [8, 4]])
        ids = _ids(14, 90)
        ids[0, 2:8] = 99
        inputs: dict[str, Any] = {"input_ids": ids, "pixel_values": torch.randn(1, 3, 4, 4 * 96),
                                  "target_sizes": sizes}
        if train:
            inputs["labels"] = ids.clone()
        return model, inputs

    return build


_ALL: dict[str, Job] = {j.name: j for j in (
    Job("hunyuan_vl_train", _hunyuan_vl(True)),
    Job("hunyuan_vl_eval", _hunyuan_vl(False)),
    Job("sam3_text_seg_eval", _sam3),
    Job("minicpmv4_6_train", _minicpmv4_6(True)),
    Job("minicpmv4_6_eval", _minicpmv4_6(False)),
)}
JOBS: dict[str, Job] = _pick(
    _ALL, "hunyuan_vl_train", "hunyuan_vl_eval", "sam3_text_seg_eval", "minicpmv4_6_train", "minicpmv4_6_eval",
)
"""The breaking jobs, each breaking at least once in its own family's code: HunYuan-VL's positional-embedding
interpolation to each image's tensor grid size (``interpolate`` with sizes from ``grid_thw``), its per-image split
(``.tolist()`` split sizes) and ``get_rope_index`` (``input_token_type.tolist()``); SAM 3's DETR decoder coordinate
grid (``torch.arange(0, height)`` with a tensor ``height``); MiniCPM-V 4.6's per-image merger (slicing by tensor
sizes, ``.item()``) and ViT window merger (``grid_thw.tolist()`` via ``vision_utils``). Train and eval of HunYuan-VL
and of MiniCPM-V 4.6 give the same counts and sites (the loss is the shared causal-LM loss). HunYuan-VL and
MiniCPM-V 4.6 also break at the Qwen2-VL-style per-image attention split (``lengths.tolist()``), at shared
``vision_utils`` helpers and at their LLaVA-style placeholder-mask checks. Caveats in ``docs/corpus-fourth-scan.md``."""

NEAR_COPIES: dict[str, Job] = {}
"""None found."""

NOT_BREAKING: dict[str, Job] = {}
"""None measured."""

NOT_BUILT: dict[str, str] = {
    "sam3_box_prompt": "Sam3Model with input_boxes: the geometry encoder calls torchvision.ops.roi_align and "
                       "torchvision is not installed here (NameError); only the text prompt was measured",
    "sam3_train": "Sam3Model has no labels / loss argument; only eval was measured",
    "deepseek_ocr2": "not built: its text model is MoE (expert_hit nonzero loop), MoE models are excluded",
    "granite4_vision": "not built: its data-dependent image code (image_size.tolist(), anyres patch counts) is "
                       "LLaVA-NeXT's, a used family",
    "molmo2 / kosmos2_5 / mllama / groupvit / tvp": "looked at, not built for lack of time (no obvious own "
                                                    "data-dependent code found by grep, or complex inputs)",
}
"""Tried and dropped, or not built, with the reason."""

MEASURABLE: dict[str, Job] = dict(_ALL)
"""Every job this file defines."""
