"""Sixth held-out set, vision part: filled in by the scan of 2026-12-05 (see docs/corpus-sixth-scan.md).

Families none of the earlier corpora touch: VisualBERT's pre-training on detector region features with its
image-text alignment (vision-language), ColQwen2's multi-vector page retrieval with its unpadding of the processor's
padded patches (document retrieval / vision-language), and Nemotron-H Omni's video path with Efficient Video Sampling
token pruning (video vision-language). They were chosen only by novelty (no job of the family in an earlier corpus,
not in the earlier scans' lists, breaking code not copied from a used family) and by breaking in their own code,
without reading or running the advisor. :data:`JOBS` break, each at least once in its own family's modeling file;
:data:`NEAR_COPIES` break too, but only at a used family's code (RADIO) or at shared helpers; :data:`NOT_BREAKING`
compile whole. Same shape as :mod:`tests.models.corpus_fifth_vision`: a :class:`~tests.models.corpus.Job` builds its
model offline from a tiny config (random weights, nothing downloaded; :meth:`~tests.models.corpus.Job.make` seeds
torch, numpy and random with 0 before ``build``) and returns it with its keyword inputs. Each job was measured with
``python -m tests.models.explain_check_sixth JOB`` (``OMP_NUM_THREADS=1``) on torch 2.13 / transformers 5.25.0,
twice in separate processes, with the same counts both times; figures and break sites are in
``docs/corpus-sixth-scan.md``.
"""

from __future__ import annotations

from typing import Any

import torch

from tests.models.corpus import Job, _ids, _mode, _pick

__all__ = ["JOBS", "MEASURABLE", "NEAR_COPIES", "NOT_BREAKING", "NOT_BUILT"]


def _visual_bert(train: bool):
    def build():
        import transformers as T

        cfg = T.VisualBertConfig(vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                 intermediate_size=32, visual_embedding_dim=12, max_position_embeddings=64)
        model = _mode(T.VisualBertForPreTraining(cfg), train)
        # 8 text tokens and 4 detector region features; each region is aligned to up to 2 words (-1 = no word),
        # and the third region has no word at all (an all -1 row)
        ids = _ids(8, 100)
        alignment = torch.tensor([[[1, 2], [3, -1], [-1, -1], [5, 6]]])
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": torch.ones(1, 8, dtype=torch.long),
                                  "visual_embeds": torch.randn(1, 4, 12),
                                  "visual_attention_mask": torch.ones(1, 4, dtype=torch.long),
                                  "image_text_alignment": alignment}
        if train:
            labels = torch.full((1, 12), -100)
            labels[0, 2:5] = ids[0, 2:5]
            inputs["labels"] = labels
            inputs["sentence_image_labels"] = torch.tensor([1])
        return model, inputs

    return build


def _colqwen2():
    import transformers as T

    vision = dict(depth=1, embed_dim=16, hidden_size=16, num_heads=2, mlp_ratio=2, patch_size=2,
                  spatial_merge_size=2, temporal_patch_size=2, in_channels=3)
    text = dict(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                num_key_value_heads=2, max_position_embeddings=64, head_dim=8,
                rope_scaling={"type": "mrope", "mrope_section": [1, 1, 2]})
    vlm = dict(model_type="qwen2_vl", vision_config=vision, text_config=text, image_token_id=99,
               vision_start_token_id=98, video_token_id=97)
    cfg = T.ColQwen2Config(vlm_config=vlm, embedding_dim=8)
    model = T.ColQwen2ForRetrieval(cfg).eval()
    # two pages of 4x4 and 2x4 patches (t=1), padded to 16 patches each: the retrieval head unpads them with a
    # boolean mask; merged 2x2 -> 4 and 2 image tokens
    grid = torch.tensor([[1, 4, 4], [1, 2, 4]])
    ids = _ids(10, 90).repeat(2, 1)
    ids[0, 2:6] = 99
    ids[1, 2:4] = 99
    mask = torch.ones(2, 10, dtype=torch.long)
    return model, {"input_ids": ids, "attention_mask": mask, "pixel_values": torch.randn(2, 16, 3 * 2 * 2 * 2),
                   "image_grid_thw": grid}


def _pi0(train: bool):
    def build():
        import transformers as T

        vlm = dict(text_config=dict(model_type="gemma", hidden_size=16, num_hidden_layers=1, intermediate_size=32,
                                    num_attention_heads=2, num_key_value_heads=1, head_dim=8, vocab_size=100),
                   vision_config=dict(model_type="siglip_vision_model", hidden_size=16, intermediate_size=32,
                                      num_hidden_layers=1, num_attention_heads=2, patch_size=8, image_size=32,
                                      vision_use_head=False),
                   projection_dim=16, image_token_id=99)
        dit = dict(hidden_size=16, num_hidden_layers=1, intermediate_size=32, num_attention_heads=2,
                   num_key_value_heads=1, head_dim=8, vocab_size=100)
        cfg = T.PI0Config(vlm_config=vlm, dit_config=dit, chunk_size=4, max_state_dim=6, max_action_dim=6)
        model = _mode(T.PI0ForConditionalGeneration(cfg), train)
        # two camera slots of 32x32 (patch 8 -> 16 tokens each), the second one absent
        ids = _ids(20, 90)
        ids[0, :16] = 99
        inputs: dict[str, Any] = {"state": torch.randn(1, 6), "input_ids": ids,
                                  "pixel_values": torch.randn(1, 2, 3, 32, 32),
                                  "pixel_attention_mask": torch.tensor([[True, False]]),
                                  "attention_mask": torch.ones(1, 20, dtype=torch.long)}
        if train:
            inputs["actions"] = torch.randn(1, 4, 6)
        else:
            inputs["noise"] = torch.randn(1, 4, 6)
            inputs["timestep"] = torch.tensor([0.5])
        return model, inputs

    return build


def _nemotron_h_omni(train: bool, video: bool = False):
    def build():
        import transformers as T

        vision = dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, mlp_ratio=2.0, patch_size=8,
                      image_size=32, max_img_size=64, num_cls_tokens=1, num_registers=1, summary_idxs=[0],
                      video_temporal_patch_size=2)
        text = dict(vocab_size=100, hidden_size=16, layers_block_type=["full_attention", "mlp"],
                    num_attention_heads=2, num_key_value_heads=1, head_dim=8, intermediate_size=32,
                    max_position_embeddings=64)
        cfg = T.NemotronH_Omni_Reasoning_V3_Config(vision_config=vision, text_config=text, audio_config=None,
                                                   projector_hidden_size=16, vision_hidden_size=16,
                                                   image_token_id=99, video_token_id=98,
                                                   video_pruning_rate=0.5 if video else 0.0)
        model = _mode(T.NemotronH_Omni_Reasoning_V3(cfg), train)
        ids = _ids(20, 90)
        if video:
            # one video of 3 tubelets (2 frames of 32x32 each, patch 8), pixel-shuffled 2x2 -> 4 tokens a tubelet:
            # 12 placeholder tokens, of which Efficient Video Sampling keeps 6
            ids[0, 2:14] = 99
            inputs: dict[str, Any] = {"input_ids": ids, "pixel_values_videos": torch.randn(1, 3, 2 * 3, 32, 32),
                                      "attention_mask": torch.ones(1, 20, dtype=torch.long)}
        else:
            # two packed images of 4x4 and 2x4 patches (patch 8), pixel-shuffled 2x2 -> 4 + 2 image tokens
            ids[0, 2:8] = 99
            inputs = {"input_ids": ids, "pixel_values": torch.randn(24, 3 * 8 * 8),
                      "image_grid_hw": torch.tensor([[4, 4], [2, 4]])}
        if train:
            # the model prunes input_ids but not labels: with a video, label the 14 positions left after pruning
            inputs["labels"] = ids[:, :14].clone() if video else ids.clone()
        return model, inputs

    return build


_ALL: dict[str, Job] = {j.name: j for j in (
    Job("visual_bert_pretrain_train", _visual_bert(True)),
    Job("visual_bert_pretrain_eval", _visual_bert(False)),
    Job("colqwen2_retrieval_eval", _colqwen2),
    Job("pi0_action_train", _pi0(True)),
    Job("pi0_action_eval", _pi0(False)),
    Job("nemotron_h_omni_vlm_train", _nemotron_h_omni(True)),
    Job("nemotron_h_omni_vlm_eval", _nemotron_h_omni(False)),
    Job("nemotron_h_omni_video_eval", _nemotron_h_omni(False, video=True)),
    Job("nemotron_h_omni_video_train", _nemotron_h_omni(True, video=True)),
)}

JOBS: dict[str, Job] = _pick(
    _ALL, "visual_bert_pretrain_train", "visual_bert_pretrain_eval", "colqwen2_retrieval_eval",
    "nemotron_h_omni_video_eval", "nemotron_h_omni_video_train",
)
"""The breaking jobs, each breaking at least once in its own family's code: VisualBERT's guard against regions
aligned to no word (``if (image_text_alignment_mask == 0).sum() != 0:``, a data-dependent branch, and the
``logger.warning`` under it); ColQwen2's unpadding of the padded patch batch (``pixel_values[mask]``, boolean-mask
indexing), followed by the Qwen2-VL vision tower's breaks (used family, shared ``vision_utils.py``); Nemotron-H Omni's
Efficient Video Sampling, which drops the pruned video tokens from ``inputs_embeds``, ``attention_mask`` and
``input_ids`` (``x[retention_mask]``, boolean-mask indexing, three times), next to its placeholder checks (the shared
``torch_compilable_check``), a ``logger.warning_once`` reached through its own read of the deprecated
``config.torch_dtype`` and, in training, the shared ``loss_function``'s ``loss_type=None`` warning. VisualBERT's train
and eval give the same counts and sites (its pre-training losses compile). Nemotron-H Omni is also in
:mod:`tests.models.corpus_sixth_text` (its audio path, breaking in ``get_audio_features``): same family, other
sites. Caveats in ``docs/corpus-sixth-scan.md``."""

NEAR_COPIES: dict[str, Job] = _pick(_ALL, "nemotron_h_omni_vlm_train", "nemotron_h_omni_vlm_eval")
"""Breaking jobs whose every break is at a used family's code or at a shared helper: Nemotron-H Omni's image path
breaks in its RADIO tower's packed-sequence code (RADIO is used by ``radio_packed_eval``), at the shared
``torch_compilable_check`` of its own image-grid and placeholder checks, and, in training, at the shared
``loss_function``'s ``loss_type=None`` warning (reported at the model's ``self.loss_function(`` line)."""

NOT_BREAKING: dict[str, Job] = _pick(_ALL, "pi0_action_train", "pi0_action_eval")
"""Measured with 0 graph breaks (explain: 1 graph) on torch 2.13 / transformers 5.25: not in :data:`JOBS`. PI0's
vision-language-action flow matching: its camera-slot gather is written without data-dependent shapes, and the
Beta-distributed timestep of training is traced whole."""

NOT_BUILT: dict[str, str] = {
    "florence2": "not built: its only own data-dependent sites are the LLaVA placeholder check (torch_compilable_check) "
                 "and the BART-style `logger.warning` about use_cache with labels, both copied idioms of used "
                 "families",
    "ultravbert / colmodernvbert / gemma4_unified / embedding_gemma2": "not built: their data-dependent code is the "
                                                                        "Idefics3 / SmolVLM / ModernVBERT "
                                                                        "real-image selection and split, or Gemma 4's "
                                                                        "pooler-mask and split (used families)",
    "ovis2_5 / glm_ocr / cohere_compass / exaone4_5": "not built: their data-dependent code is the Qwen2-VL / "
                                                      "GLM-4V vision-attention split, get_rope_index and "
                                                      "image_grid_thw split idioms (used families)",
    "perception_lm / cohere2_vision / got_ocr2 / lighton_ocr / fast_vlm / aya_vision / deepseek_vl / "
    "deepseek_vl_hybrid / vipllava / video_llava / qianfan_ocr / shieldgemma2 / neomme": "not built: only the LLaVA "
                                                                                          "get_placeholder_mask check "
                                                                                          "(copied)",
    "pp_doclayout_v4 / eomt_dinov3": "not built: their data-dependent code is the DETR `isfinite` clamp / RT-DETR "
                                     "and EoMT Hungarian-matching code (used families)",
    "step3p7 / dots3_note / kolibri1": "not built: MoE (expert routing), excluded",
    "pix2struct": "not built: its only data-dependent branches (`torch.isinf(...).any()`) run in float16 only",
    "vit_mae / levit / imagegpt / mlcd / aimv2 / swin2sr / mobilevitv2 / lxmert / pp_ocrv5_server_rec / chmv2":
        "probed (one explain in a scratch script, not the checker): 0 graph breaks, not added",
}
"""Tried and dropped, or not built, with the reason."""

MEASURABLE: dict[str, Job] = dict(_ALL)
"""Every job this file defines, the non-breaking ones included."""
