"""Held-out transformers jobs in vision, vision-language, detection, segmentation and keypoints, measured.

A second held-out set for the advisor, of families none of the earlier corpora (``corpus.py``, ``corpus19.py``,
``corpus27.py``, ``corpus_fresh.py``, the MoE, speech and text files) touch: any-resolution image tiling and
unpadding in a multimodal language model (LLaVA-NeXT), Pixtral's variable-size vision encoder with Mistral 3's
patch merger, Phi-4-multimodal's HD crop transform, real-time detection with a distribution-refinement loss
(D-FINE) and with Group-DETR matching (LW-DETR), universal segmentation with text queries (OneFormer) and with
mask annealing in a plain ViT (EoMT), and masked-unit pretraining of a hierarchical ViT (Hiera). None is MoE.
:data:`JOBS` break, each at least once in its own family's code; :data:`NEAR_COPIES` break too, but only at code
copied from a family already used (DETR, RT-DETR, Qwen2-VL, LLaVA) or from D-FINE of :data:`JOBS`, or only at a
shared helper; :data:`NOT_BREAKING` compile whole. Same shape as :mod:`tests.models.corpus_fresh`: a
:class:`~tests.models.corpus.Job` builds its model offline from a tiny config (random weights, nothing downloaded,
transformers-native backbones; :meth:`~tests.models.corpus.Job.make` seeds torch, numpy and random with 0 before
``build``, so the weights and the inputs drawn in ``build`` are the same on every run) and returns it with its
keyword inputs. Each job was measured with ``torch._dynamo.explain`` of one call (after one eager call) in a fresh
process (``python -m tests.models.explain_check_heldout JOB``, ``OMP_NUM_THREADS=1``) on torch 2.13 /
transformers 5.25.0, twice, with the same counts both times; the figures, explain's wall time and the source line
of every break are in ``docs/corpus-heldout-scan.md``. The advisor was run on them once, after (``docs/corpus.md``).
"""

from __future__ import annotations

from typing import Any

import torch

from tests.models.corpus import Job, _boxes, _ids, _mode, _pick

__all__ = ["JOBS", "MEASURABLE", "NEAR_COPIES", "NOT_BREAKING", "NOT_BUILT"]


def _llama_text(vocab: int = 100) -> dict[str, Any]:
    return dict(model_type="llama", vocab_size=vocab, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=128)


def _image_tokens(ids: torch.Tensor, token: int, count: int, start: int = 1) -> torch.Tensor:
    """``ids`` with ``count`` image placeholder tokens from position ``start`` on."""
    ids = ids.clone()
    ids[0, start:start + count] = token
    return ids


def _llava_next():
    import transformers as T

    vision = dict(model_type="clip_vision_model", hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                  num_attention_heads=2, image_size=16, patch_size=8)
    cfg = T.LlavaNextConfig(vision_config=vision, text_config=_llama_text(), image_token_index=99,
                            image_grid_pinpoints=[[16, 32], [32, 16], [32, 32]], vision_feature_layer=-1,
                            vision_feature_select_strategy="default", projector_hidden_act="gelu")
    model = T.LlavaNextForConditionalGeneration(cfg).eval()
    pixel_values = torch.randn(1, 5, 3, 16, 16)  # base view + a 2x2 grid of 16x16 tiles (best fit 32x32)
    image_sizes = torch.tensor([[24, 30]])  # original size: unpadding keeps part of the 4x4 feature grid
    with torch.no_grad():
        feats = model.model.get_image_features(pixel_values=pixel_values, image_sizes=image_sizes).pooler_output
    n = sum(int(f.shape[0]) for f in feats)
    ids = _image_tokens(_ids(n + 6, 90), 99, n)
    return model, {"input_ids": ids, "pixel_values": pixel_values, "image_sizes": image_sizes,
                   "labels": ids.clone()}


def _mistral3():
    import transformers as T

    vision = dict(model_type="pixtral", hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                  num_attention_heads=2, head_dim=8, image_size=32, patch_size=4)
    text = dict(model_type="mistral", vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                num_attention_heads=2, num_key_value_heads=1, head_dim=8, max_position_embeddings=128)
    cfg = T.Mistral3Config(vision_config=vision, text_config=text, image_token_index=99, spatial_merge_size=2,
                           vision_feature_layer=-1, projector_hidden_act="gelu")
    model = T.Mistral3ForConditionalGeneration(cfg).eval()
    image_sizes = torch.tensor([[24, 16]])  # a 24x16 image padded to 32x32: a 6x4 patch grid, merged 2x2 -> 6 tokens
    n = (24 // 4 // 2) * (16 // 4 // 2)
    ids = _image_tokens(_ids(n + 6, 90), 99, n)
    return model, {"input_ids": ids, "pixel_values": torch.randn(1, 3, 32, 32), "image_sizes": image_sizes,
                   "labels": ids.clone()}


def _efficientloftr():
    import transformers as T

    cfg = T.EfficientLoFTRConfig(stage_num_blocks=[1, 1, 1, 1], out_features=[8, 8, 16, 32], stage_stride=[2, 1, 2, 2],
                                 hidden_size=32, num_attention_layers=1, num_attention_heads=8,
                                 q_aggregation_kernel_size=1, kv_aggregation_kernel_size=1,
                                 q_aggregation_stride=1, kv_aggregation_stride=1,
                                 fine_kernel_size=2, fine_matching_slice_dim=4, coarse_matching_border_removal=0,
                                 coarse_matching_threshold=0.0)
    model = T.EfficientLoFTRForKeypointMatching(cfg).eval()
    return model, {"pixel_values": torch.rand(1, 2, 3, 64, 64)}


def _sam2():
    import transformers as T

    backbone = dict(model_type="sam2_hiera_det_model", hidden_size=8, num_attention_heads=1, image_size=[64, 64], patch_kernel_size=[7, 7],
                    patch_stride=[4, 4], patch_padding=[3, 3], query_stride=[2, 2], num_query_pool_stages=3,
                    window_positional_embedding_background_size=[4, 4], blocks_per_stage=[1, 1, 2, 1],
                    embed_dim_per_stage=[8, 16, 32, 64], num_attention_heads_per_stage=[1, 1, 2, 2],
                    window_size_per_stage=[4, 4, 4, 4], global_attention_blocks=[3])
    vision = dict(backbone_config=backbone, backbone_channel_list=[64, 32, 16, 8],
                  backbone_feature_sizes=[[16, 16], [8, 8], [4, 4]], fpn_hidden_size=16)
    prompt = dict(hidden_size=16, image_size=64, patch_size=16, mask_input_channels=4)
    mask = dict(hidden_size=16, mlp_dim=32, num_hidden_layers=1, num_attention_heads=2, iou_head_hidden_dim=16)
    cfg = T.Sam2Config(vision_config=vision, prompt_encoder_config=prompt, mask_decoder_config=mask)
    return T.Sam2Model(cfg).eval(), {"pixel_values": torch.randn(1, 3, 64, 64),
                                     "input_points": torch.tensor([[[[20.0, 30.0]]]]),
                                     "input_labels": torch.tensor([[[1]]])}


def _hgnet():
    import transformers as T

    return T.HGNetV2Config(embedding_size=8, hidden_sizes=[16, 16, 16, 16], depths=[1, 1, 1, 1],
                           stem_channels=[3, 8, 8], stage_in_channels=[8, 16, 16, 16],
                           stage_mid_channels=[8, 8, 8, 8], stage_out_channels=[16, 16, 16, 16],
                           stage_num_blocks=[1, 1, 1, 1], stage_downsample=[False, True, True, True],
                           stage_light_block=[False, False, True, True], stage_kernel_size=[3, 3, 5, 5],
                           stage_numb_of_layers=[1, 1, 1, 1], out_features=["stage2", "stage3", "stage4"])


def _d_fine(train: bool):
    def build():
        import transformers as T

        cfg = T.DFineConfig(backbone_config=_hgnet(), encoder_hidden_dim=16, encoder_in_channels=[16, 16, 16],
                            encoder_ffn_dim=32, encoder_attention_heads=2, d_model=16, decoder_in_channels=[16, 16, 16],
                            decoder_ffn_dim=32, decoder_layers=2, decoder_attention_heads=2, decoder_n_points=2,
                            num_queries=6, num_denoising=4, num_labels=3, anchor_image_size=None,
                            auxiliary_loss=True, max_num_bins=8, lqe_hidden_dim=8, hidden_expansion=0.5)
        model = _mode(T.DFineForObjectDetection(cfg), train)
        inputs: dict[str, Any] = {"pixel_values": torch.randn(1, 3, 64, 64)}
        if train:
            inputs["labels"] = [_boxes(2, 3)]
        return model, inputs

    return build


def _oneformer(train: bool):
    def build():
        import transformers as T

        backbone = T.SwinConfig(image_size=64, patch_size=4, embed_dim=8, depths=[1, 1, 1, 1], num_heads=[1, 1, 2, 2],
                                window_size=2, out_features=["stage1", "stage2", "stage3", "stage4"])
        cfg = T.OneFormerConfig(backbone_config=backbone, num_queries=4, num_labels=3, train_num_points=64,
                                task_seq_len=8, text_encoder_width=64, text_encoder_context_length=8,
                                text_encoder_num_layers=1, text_encoder_vocab_size=100, text_encoder_proj_layers=1,
                                text_encoder_n_ctx=2, conv_dim=64, mask_dim=64, hidden_dim=64,
                                encoder_feedforward_dim=32, encoder_layers=1, decoder_layers=2,
                                num_attention_heads=2, dim_feedforward=32, query_dec_layers=1,
                                is_training=train, use_auxiliary_loss=False)
        model = _mode(T.OneFormerForUniversalSegmentation(cfg), train)
        inputs: dict[str, Any] = {"pixel_values": torch.randn(1, 3, 64, 64), "task_inputs": _ids(8)}
        if train:
            masks = torch.zeros(2, 64, 64)
            masks[0, :32] = 1
            masks[1, 32:] = 1
            inputs.update(text_inputs=torch.randint(0, 100, (1, 2, 8)), mask_labels=[masks],
                          class_labels=[torch.tensor([0, 2])])
        return model, inputs

    return build


def _conditional_detr(train: bool):
    def build():
        import transformers as T

        backbone = T.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16, 16, 16], depths=[1, 1, 1, 1],
                                  layer_type="basic", out_features=["stage4"])
        cfg = T.ConditionalDetrConfig(backbone_config=backbone, use_timm_backbone=False, use_pretrained_backbone=False,
                                      d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                                      decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
                                      num_queries=6, num_labels=3, auxiliary_loss=False)
        model = _mode(T.ConditionalDetrForObjectDetection(cfg), train)
        inputs: dict[str, Any] = {"pixel_values": torch.randn(1, 3, 64, 64)}
        if train:
            inputs["labels"] = [_boxes(2, 3)]
        return model, inputs

    return build


def _deimv2(train: bool):
    def build():
        import transformers as T

        cfg = T.Deimv2Config(backbone_config=_hgnet(), encoder_hidden_dim=16, encoder_in_channels=[16, 16, 16],
                             encoder_ffn_dim=32, encoder_attention_heads=2, d_model=16, decoder_in_channels=[16, 16, 16],
                             decoder_ffn_dim=32, decoder_layers=2, decoder_attention_heads=2, decoder_n_points=2,
                             num_queries=6, num_denoising=4, num_labels=3, anchor_image_size=None,
                             auxiliary_loss=True, max_num_bins=8, lqe_hidden_dim=8, hidden_expansion=0.5)
        model = _mode(T.Deimv2ForObjectDetection(cfg), train)
        inputs: dict[str, Any] = {"pixel_values": torch.randn(1, 3, 64, 64)}
        if train:
            inputs["labels"] = [_boxes(2, 3)]
        return model, inputs

    return build


def _lw_detr(train: bool):
    def build():
        import transformers as T

        backbone = dict(model_type="lw_detr_vit", image_size=64, pretrain_image_size=64, patch_size=8, hidden_size=16,
                        num_hidden_layers=2, num_attention_heads=2, mlp_ratio=2, window_block_indices=[0],
                        out_indices=[1, 2], num_windows=4)
        cfg = T.LwDetrConfig(backbone_config=backbone, projector_scale_factors=[1.0], c2f_num_blocks=1, d_model=16,
                             decoder_ffn_dim=32, decoder_n_points=2, decoder_layers=1, decoder_self_attention_heads=2,
                             decoder_cross_attention_heads=2, num_queries=4, group_detr=2, num_labels=3,
                             auxiliary_loss=False)
        model = _mode(T.LwDetrForObjectDetection(cfg), train)
        inputs: dict[str, Any] = {"pixel_values": torch.randn(1, 3, 64, 64)}
        if train:
            inputs["labels"] = [_boxes(2, 3)]
        return model, inputs

    return build


def _glm4v():
    import transformers as T

    vision = dict(depth=1, hidden_size=16, num_heads=2, image_size=28, patch_size=14, spatial_merge_size=2,
                  temporal_patch_size=2, out_hidden_size=16, intermediate_size=32)
    text = dict(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                num_key_value_heads=1, max_position_embeddings=128,
                rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1],
                                 "partial_rotary_factor": 1.0})
    cfg = T.Glm4vConfig(vision_config=vision, text_config=text, image_token_id=99, video_token_id=98,
                        image_start_token_id=96, image_end_token_id=97)
    model = T.Glm4vForConditionalGeneration(cfg).eval()
    grid = torch.tensor([[1, 4, 4]])  # one image of 4x4 patches, merged 2x2 -> 4 tokens
    ids = _ids(12, 90)
    ids[0, 2] = 96
    ids[0, 3:7] = 99
    ids[0, 7] = 97
    return model, {"input_ids": ids, "pixel_values": torch.randn(16, 3 * 2 * 14 * 14), "image_grid_thw": grid,
                   "mm_token_type_ids": (ids == 99).long(), "labels": ids.clone()}


def _gemma3():
    import transformers as T

    vision = dict(model_type="siglip_vision_model", hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                  num_attention_heads=2, image_size=32, patch_size=8)
    text = dict(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2,
                num_key_value_heads=1, head_dim=8, max_position_embeddings=128, sliding_window=8)
    cfg = T.Gemma3Config(vision_config=vision, text_config=text, mm_tokens_per_image=4, image_token_index=99,
                         boi_token_index=97, eoi_token_index=98)
    model = T.Gemma3ForConditionalGeneration(cfg).train()
    ids = _ids(12, 90)
    ids[0, 2] = 97
    ids[0, 3:7] = 99
    ids[0, 7] = 98
    tt = (ids == 99).long()
    return model, {"input_ids": ids, "pixel_values": torch.randn(1, 3, 32, 32), "token_type_ids": tt,
                   "labels": ids.clone()}


def _eomt(train: bool):
    def build():
        import transformers as T

        cfg = T.EomtConfig(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
                           image_size=32, patch_size=8, num_blocks=1, num_queries=4, num_labels=3,
                           num_upscale_blocks=1, train_num_points=64)
        model = _mode(T.EomtForUniversalSegmentation(cfg), train)
        inputs: dict[str, Any] = {"pixel_values": torch.randn(1, 3, 32, 32)}
        if train:
            masks = torch.zeros(2, 32, 32)
            masks[0, :16] = 1
            masks[1, 16:] = 1
            inputs.update(mask_labels=[masks], class_labels=[torch.tensor([0, 2])])
        return model, inputs

    return build


def _hiera_pretrain():
    import transformers as T

    cfg = T.HieraConfig(embed_dim=8, image_size=[64, 64], patch_size=[7, 7], patch_stride=[4, 4],
                        patch_padding=[3, 3], depths=[1, 1, 1, 1], num_heads=[1, 1, 2, 2], mask_ratio=0.5,
                        decoder_hidden_size=16, decoder_depth=1, decoder_num_heads=2)
    return T.HieraForPreTraining(cfg).train(), {"pixel_values": torch.randn(1, 3, 64, 64)}


def _ovis2(train: bool):
    def build():
        import transformers as T

        vision = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                      image_size=32, patch_size=8, vocab_size=24, hidden_stride=2, num_visual_indicator_tokens=5)
        text = dict(model_type="qwen2", vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                    num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=128)
        cfg = T.Ovis2Config(vision_config=vision, text_config=text, image_token_id=99,
                            visual_indicator_token_ids=[94, 95, 96, 97, 98], vocab_size=100, hidden_size=16)
        model = _mode(T.Ovis2ForConditionalGeneration(cfg), train)
        ids = _ids(12, 90)
        ids[0, 1] = 94  # <image start> indicator, then the 4 image tokens (16 patches merged 2x2), <image end>
        ids[0, 2:6] = 99
        ids[0, 6] = 95
        inputs: dict[str, Any] = {"input_ids": ids, "pixel_values": torch.randn(1, 3, 32, 32)}
        if train:
            inputs["labels"] = ids.clone()
        return model, inputs

    return build


def _phi4mm(train: bool):
    def build():
        import transformers as T

        vision = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2, image_size=32,
                      patch_size=8, crop_size=32, image_token_id=99, feature_layer=-2)
        audio = dict(hidden_size=16, intermediate_size=32, num_blocks=1, num_attention_heads=2, input_size=8,
                     ext_pw_out_channel=16, depthwise_separable_out_channel=16, nemo_conv_channels=16,
                     time_reduction=2, audio_token_id=98)
        cfg = T.Phi4MultimodalConfig(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                     num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=128,
                                     original_max_position_embeddings=128, bos_token_id=0, pad_token_id=0,
                                     vision_config=vision, audio_config=audio)
        model = _mode(T.Phi4MultimodalForCausalLM(cfg), train)
        # a 64x32 image: a global 32x32 view + 2x1 crops of 32x32; the mask (of 8x8 patches) keeps part of the crops
        pixel_values = torch.randn(1, 3, 3, 32, 32)
        mask = torch.ones(1, 3, 4, 4, dtype=torch.long)
        mask[0, 2, 2:, :] = 0
        mask[0, 1:, :, 2:] = 0
        image_sizes = torch.tensor([[64, 32]])
        # image tokens: the kept crop grid (3 rows x 1 column of 1x1 pooled tokens, + a newline token per row), a
        # separator, and the 2x2 pooled global view (+ a newline per row): 3 * 2 + 1 + 2 * 3
        n = 3 * (1 + 1) + 1 + 2 * (2 + 1)
        ids = _ids(n + 6, 90)
        ids[0, 2:2 + n] = 99
        inputs: dict[str, Any] = {"input_ids": ids, "image_pixel_values": pixel_values, "image_sizes": image_sizes,
                                  "image_attention_mask": mask}
        if train:
            inputs["labels"] = ids.clone()
        return model, inputs

    return build


_ALL: dict[str, Job] = {j.name: j for j in (
    Job("llava_next_anyres_eval", _llava_next),
    Job("mistral3_pixtral_eval", _mistral3),
    Job("efficientloftr_match_eval", _efficientloftr),
    Job("sam2_point_eval", _sam2),
    Job("d_fine_det_train", _d_fine(True)),
    Job("d_fine_det_eval", _d_fine(False)),
    Job("oneformer_seg_train", _oneformer(True)),
    Job("oneformer_seg_eval", _oneformer(False)),
    Job("conditional_detr_det_train", _conditional_detr(True)),
    Job("deimv2_det_train", _deimv2(True)),
    Job("lw_detr_det_train", _lw_detr(True)),
    Job("lw_detr_det_eval", _lw_detr(False)),
    Job("glm4v_eval", _glm4v),
    Job("gemma3_vlm_train", _gemma3),
    Job("eomt_seg_train", _eomt(True)),
    Job("eomt_seg_eval", _eomt(False)),
    Job("hiera_pretrain_train", _hiera_pretrain),
    Job("ovis2_vlm_train", _ovis2(True)),
    Job("ovis2_vlm_eval", _ovis2(False)),
    Job("phi4mm_vision_train", _phi4mm(True)),
    Job("phi4mm_vision_eval", _phi4mm(False)),
)}


JOBS: dict[str, Job] = _pick(
    _ALL, "llava_next_anyres_eval", "mistral3_pixtral_eval", "phi4mm_vision_train", "phi4mm_vision_eval",
    "d_fine_det_train", "lw_detr_det_train", "oneformer_seg_train", "oneformer_seg_eval", "eomt_seg_train",
    "eomt_seg_eval", "hiera_pretrain_train",
)
"""The held-out breaking jobs (explain, torch 2.13 / transformers 5.25: 5-76 graphs), each breaking at least once
in its own family's code: LLaVA-NeXT's any-resolution grid and unpadding (``image_size.tolist()``), Pixtral's
per-image patch crop and Mistral 3's patch merger (``image_sizes`` as Python ints, ``split`` by tensor sizes),
Phi-4-multimodal's image branch (``(input_ids == image_token_id).any()``, unpacking ``image_sizes[idx]``),
D-FINE's fine-grained localization loss (boolean-mask indexing, ``transformers/loss/loss_d_fine.py``), LW-DETR's
Group-DETR loss (its scipy matcher and ``num_boxes.item()``, ``transformers/loss/loss_lw_detr.py``), OneFormer's
masked-attention fix-up (``torch.where`` on the mask), EoMT's mask annealing (``if prob < 1`` on a tensor) and
Hiera's masked-unit selection and loss (boolean-mask indexing). LLaVA-NeXT, Mistral 3 and OneFormer also break at
a ``torch_compilable_check`` (placeholder mask / deformable attention shapes), and D-FINE, LW-DETR training in
DETR's shared loss helpers (``loss_for_object_detection.py``) and D-FINE in code inherited from RT-DETR."""

NEAR_COPIES: dict[str, Job] = _pick(
    _ALL, "conditional_detr_det_train", "deimv2_det_train", "d_fine_det_eval", "glm4v_eval", "gemma3_vlm_train",
    "ovis2_vlm_train", "ovis2_vlm_eval",
)
"""Breaking jobs whose every break is at copied or shared code. Conditional DETR training: its encoder layer is
DETR's (the ``isfinite`` clamp, modular from ``DetrEncoderLayer``) and its loss is the shared Deformable-DETR / DETR
loss (``loss_deformable_detr.py``, ``loss_for_object_detection.py``). DEIMv2 training: D-FINE's breaks (its model
and loss are modular from D-FINE, a job of :data:`JOBS`) plus a ``num_boxes.item()`` in ``loss_deimv2.py`` that is
RT-DETR's loss line. D-FINE eval: only the ``torch_compilable_check`` of its multiscale deformable attention
(inherited from RT-DETR). GLM-4V: Qwen2-VL's vision attention split, ``get_vision_position_ids`` and
``get_rope_index`` (``Glm4vModel`` subclasses ``Qwen2VLModel``) and the shared ``transformers/vision_utils.py``.
Gemma 3 and Ovis2: only the ``torch_compilable_check`` of ``get_placeholder_mask``, as in LLaVA."""

NOT_BREAKING: dict[str, Job] = _pick(_ALL, "efficientloftr_match_eval", "sam2_point_eval", "lw_detr_det_eval")
"""Measured with 0 graph breaks (explain: 1 graph) on torch 2.13 / transformers 5.25: not in :data:`JOBS`."""

NOT_BUILT: dict[str, str] = {
    "glm4v_eval_without_mm_token_type_ids": "GLM-4V raises ValueError when image_grid_thw is given without "
                                            "mm_token_type_ids (needed for its M-RoPE); glm4v_eval passes them",
    "efficientloftr_default_heads": "EfficientLoFTR's 2-D RoPE needs head_dim * partial_rotary_factor(4) / 2 == "
                                    "hidden_size / 4, so a 16-wide model with 2 heads fails; the job uses 32 wide, "
                                    "8 heads",
    "sam2_small_windows": "SAM2's Hiera with a 2-wide window (or a global block opening a pooled stage) divides by "
                          "a zero window after query pooling; the job uses 4-wide windows and 1-1-2-1 blocks",
    "llava_next_full_strategy": "LLaVA-NeXT with vision_feature_select_strategy='full' keeps CLIP's class token, "
                                "so the tile features do not fold into the patch grid; the job uses 'default'",
}
"""Tried and dropped, or built differently, with the reason."""

MEASURABLE: dict[str, Job] = dict(_ALL)
"""Every job this file defines, the non-breaking ones included."""
