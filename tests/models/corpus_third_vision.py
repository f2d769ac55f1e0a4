"""Third held-out set, vision part: filled in by the scan of 2026-12-05 (see docs/corpus-third-scan.md).

Families none of the earlier corpora touch: Deformable DETR's own detection loss, RF-DETR's instance-segmentation
loss (mask-aware Group-DETR matching), SLANeXt's table-structure decoding loop (document OCR), RADIO's packed
variable-resolution ViT, LFM2-VL's per-image token selection, V-JEPA 2's video predictor and Emu3's VQ image
tokenizer. :data:`JOBS` break, each at least once in its own family's code; :data:`NEAR_COPIES` break only at code of
another family (DAB-DETR at Deformable DETR's loss); :data:`NOT_BREAKING` compile whole. Same shape as
:mod:`tests.models.corpus_heldout_vision`: a :class:`~tests.models.corpus.Job` builds its model offline from a tiny
config (random weights, nothing downloaded, transformers-native backbones; :meth:`~tests.models.corpus.Job.make`
seeds torch, numpy and random with 0 before ``build``) and returns it with its keyword inputs. Each job was measured
with ``python -m tests.models.explain_check_third JOB`` (``OMP_NUM_THREADS=1``) on torch 2.13 / transformers 5.25.0,
twice in separate processes, with the same counts both times; figures and break sites are in
``docs/_third_vision.md``.
"""

from __future__ import annotations

from typing import Any

import torch

from tests.models.corpus import Job, _boxes, _ids, _mode, _pick

__all__ = ["JOBS", "MEASURABLE", "NEAR_COPIES", "NOT_BREAKING", "NOT_BUILT"]


def _resnet_backbone(out_features: list[str]) -> Any:
    import transformers as T

    return T.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16, 16, 16], depths=[1, 1, 1, 1], layer_type="basic",
                          out_features=out_features)


def _beit_mim(train: bool):
    def build():
        import transformers as T

        cfg = T.BeitConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                           image_size=32, patch_size=8, vocab_size=64, use_mask_token=True,
                           use_relative_position_bias=True)
        model = _mode(T.BeitForMaskedImageModeling(cfg), train)
        mask = torch.zeros(1, 16, dtype=torch.bool)
        mask[0, torch.randperm(16)[:6]] = True
        return model, {"pixel_values": torch.randn(1, 3, 32, 32), "bool_masked_pos": mask,
                       "labels": torch.randint(0, 64, (6,))}

    return build


def _deformable_detr(train: bool, two_stage: bool = False):
    def build():
        import transformers as T

        cfg = T.DeformableDetrConfig(backbone_config=_resnet_backbone(["stage2", "stage3", "stage4"]),
                                     use_timm_backbone=False, use_pretrained_backbone=False, d_model=32,
                                     encoder_layers=1, decoder_layers=2, encoder_attention_heads=2,
                                     decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
                                     num_queries=6, num_labels=3, num_feature_levels=3, encoder_n_points=2,
                                     decoder_n_points=2, auxiliary_loss=False, two_stage=two_stage,
                                     with_box_refine=two_stage, two_stage_num_proposals=6)
        model = _mode(T.DeformableDetrForObjectDetection(cfg), train)
        inputs: dict[str, Any] = {"pixel_values": torch.randn(1, 3, 64, 64)}
        if train:
            inputs["labels"] = [_boxes(2, 3)]
        return model, inputs

    return build


def _dab_detr(train: bool):
    def build():
        import transformers as T

        cfg = T.DabDetrConfig(backbone_config=_resnet_backbone(["stage4"]), use_timm_backbone=False,
                              use_pretrained_backbone=False, hidden_size=16, encoder_layers=1, decoder_layers=1,
                              encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
                              decoder_ffn_dim=32, num_queries=6, num_labels=3, auxiliary_loss=False)
        model = _mode(T.DabDetrForObjectDetection(cfg), train)
        inputs: dict[str, Any] = {"pixel_values": torch.randn(1, 3, 64, 64)}
        if train:
            inputs["labels"] = [_boxes(2, 3)]
        return model, inputs

    return build


def _rf_detr_seg(train: bool):
    def build():
        import transformers as T

        backbone = dict(model_type="rf_detr_dinov2", hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                        mlp_ratio=2, image_size=64, patch_size=8, num_windows=2, out_indices=[1, 2])
        cfg = T.RfDetrConfig(backbone_config=backbone, c2f_num_blocks=1, d_model=16, decoder_ffn_dim=32,
                             decoder_n_points=2, decoder_layers=1, decoder_self_attention_heads=2,
                             decoder_cross_attention_heads=2, num_queries=4, group_detr=2, num_labels=3,
                             auxiliary_loss=False, intermediate_size=32)
        model = _mode(T.RfDetrForInstanceSegmentation(cfg), train)
        inputs: dict[str, Any] = {"pixel_values": torch.randn(1, 3, 64, 64)}
        if train:
            target = _boxes(2, 3)
            masks = torch.zeros(2, 64, 64)
            masks[0, :32] = 1
            masks[1, 32:] = 1
            target["masks"] = masks
            inputs["labels"] = [target]
        return model, inputs

    return build


def _slanext():
    import transformers as T

    vision = dict(hidden_size=16, output_channels=16, num_hidden_layers=2, num_attention_heads=2, image_size=64,
                  patch_size=8, window_size=4, global_attn_indexes=[1], mlp_dim=32)
    cfg = T.SLANeXtConfig(vision_config=vision, post_conv_in_channels=16, post_conv_out_channels=16, out_channels=8,
                          hidden_size=16, max_text_length=6)
    return T.SLANeXtForTableRecognition(cfg).eval(), {"pixel_values": torch.randn(1, 3, 64, 64)}


def _radio_packed():
    import transformers as T

    cfg = T.RadioConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, mlp_ratio=2.0, patch_size=8,
                        image_size=32, max_img_size=64, num_cls_tokens=1, num_registers=1)
    grid = torch.tensor([[4, 4], [2, 6]])
    n = int(grid.prod(-1).sum())
    return T.RadioModel(cfg).eval(), {"pixel_values": torch.randn(n, 3 * 8 * 8), "image_grid_hw": grid}


def _lfm2_vl(train: bool):
    def build():
        import transformers as T

        vision = dict(model_type="siglip2_vision_model", hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                      num_attention_heads=2, num_patches=16, patch_size=2, num_channels=3)
        text = dict(model_type="lfm2", vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                    num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=128,
                    layer_types=["conv", "full_attention"])
        cfg = T.Lfm2VlConfig(vision_config=vision, text_config=text, image_token_id=99, projector_hidden_size=32,
                             downsample_factor=2)
        model = _mode(T.Lfm2VlForConditionalGeneration(cfg), train)
        # two images of 4x4 and 2x4 patches (padded to 16 patches), unshuffled 2x2 -> 4 + 2 image tokens
        spatial_shapes = torch.tensor([[4, 4], [2, 4]])
        pixel_mask = torch.ones(2, 16, dtype=torch.long)
        pixel_mask[1, 8:] = 0
        ids = _ids(12, 90)
        ids[0, 2:8] = 99
        inputs: dict[str, Any] = {"input_ids": ids, "pixel_values": torch.randn(2, 16, 12),
                                  "spatial_shapes": spatial_shapes, "pixel_attention_mask": pixel_mask}
        if train:
            inputs["labels"] = ids.clone()
        return model, inputs

    return build


def _vjepa2(masked: bool):
    def build():
        import transformers as T

        cfg = T.VJEPA2Config(patch_size=8, crop_size=32, frames_per_clip=4, tubelet_size=2, hidden_size=16,
                             num_attention_heads=2, num_hidden_layers=1, mlp_ratio=2.0, num_pooler_layers=1,
                             pred_hidden_size=16, pred_num_attention_heads=2, pred_num_hidden_layers=1,
                             pred_num_mask_tokens=2, pred_mlp_ratio=2.0)
        model = T.VJEPA2Model(cfg).eval()
        inputs: dict[str, Any] = {"pixel_values_videos": torch.randn(1, 4, 3, 32, 32)}
        if masked:  # 2 frames-tubelets x 4x4 patches = 32 tokens: a random context of 20, the other 12 as target
            order = torch.randperm(32)
            inputs.update(context_mask=[order[:20].sort().values.unsqueeze(0)],
                          target_mask=[order[20:].sort().values.unsqueeze(0)])
        return model, inputs

    return build


def _emu3(train: bool):
    def build():
        import transformers as T

        vq = dict(codebook_size=8, embed_dim=4, latent_channels=4, in_channels=3, out_channels=3,
                  temporal_downsample_factor=1, base_channels=32, channel_multiplier=[1, 1, 1], num_res_blocks=1,
                  attn_resolutions=[], hidden_size=32, num_attention_heads=1)
        text = dict(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                    num_key_value_heads=1, max_position_embeddings=128, pad_token_id=0, bos_token_id=1,
                    eos_token_id=2)
        vocab = {f"<|visual token {i:06d}|>": 60 + i for i in range(8)}
        vocab.update({"<|extra_200|>": 68, "<image>": 99})
        cfg = T.Emu3Config(vq_config=vq, text_config=text, vocabulary_map=vocab)
        model = _mode(T.Emu3ForConditionalGeneration(cfg), train)
        # a 16x12 image padded to 16x16: a 4x3 grid of VQ codes (factor 4) + an end-of-line token per row -> 16
        image_sizes = torch.tensor([[16, 12]])
        n = 4 * (3 + 1)
        ids = _ids(n + 6, 50)
        ids[0, 2:2 + n] = 99
        inputs: dict[str, Any] = {"input_ids": ids, "pixel_values": torch.randn(1, 3, 16, 16),
                                  "image_sizes": image_sizes}
        if train:
            inputs["labels"] = ids.clone()
        return model, inputs

    return build


def _videomt():
    import transformers as T

    cfg = T.VideomtConfig(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, image_size=32, patch_size=8,
                          mlp_ratio=2, num_blocks=1, num_queries=4, num_labels=3, num_upscale_blocks=1,
                          num_register_tokens=1)
    return T.VideomtForUniversalSegmentation(cfg).eval(), {"pixel_values_videos": torch.randn(1, 3, 3, 32, 32)}


def _pp_doclayout_v2():
    import transformers as T

    backbone = T.HGNetV2Config(embedding_size=8, hidden_sizes=[16, 16, 16, 16], depths=[1, 1, 1, 1],
                               stem_channels=[3, 8, 8], stage_in_channels=[8, 16, 16, 16],
                               stage_mid_channels=[8, 8, 8, 8], stage_out_channels=[16, 16, 16, 16],
                               stage_num_blocks=[1, 1, 1, 1], stage_downsample=[False, True, True, True],
                               stage_light_block=[False, False, True, True], stage_kernel_size=[3, 3, 5, 5],
                               stage_numb_of_layers=[1, 1, 1, 1], out_features=["stage2", "stage3", "stage4"])
    reading = dict(hidden_size=16, num_attention_heads=2, intermediate_size=32, num_hidden_layers=1,
                   coordinate_size=3, shape_size=2, num_classes=3, global_pointer_head_size=8,
                   max_position_embeddings=64, max_2d_position_embeddings=1024)
    cfg = T.PPDocLayoutV2Config(backbone_config=backbone, encoder_hidden_dim=16, encoder_in_channels=[16, 16, 16],
                                encoder_ffn_dim=32, encoder_attention_heads=2, d_model=16,
                                decoder_in_channels=[16, 16, 16], decoder_ffn_dim=32, decoder_layers=1,
                                decoder_attention_heads=2, decoder_n_points=2, num_queries=6, num_denoising=0,
                                num_labels=3, class_thresholds=[0.3, 0.3, 0.3], class_order=[0, 1, 2],
                                reading_order_config=reading)
    return T.PPDocLayoutV2ForObjectDetection(cfg).eval(), {"pixel_values": torch.randn(1, 3, 64, 64)}


_ALL: dict[str, Job] = {j.name: j for j in (
    Job("beit_mim_train", _beit_mim(True)),
    Job("beit_mim_eval", _beit_mim(False)),
    Job("deformable_detr_det_train", _deformable_detr(True)),
    Job("deformable_detr_det_eval", _deformable_detr(False)),
    Job("deformable_detr_twostage_eval", _deformable_detr(False, True)),
    Job("dab_detr_det_train", _dab_detr(True)),
    Job("dab_detr_det_eval", _dab_detr(False)),
    Job("rf_detr_seg_train", _rf_detr_seg(True)),
    Job("rf_detr_seg_eval", _rf_detr_seg(False)),
    Job("slanext_table_eval", _slanext),
    Job("radio_packed_eval", _radio_packed),
    Job("lfm2_vl_eval", _lfm2_vl(False)),
    Job("vjepa2_masked_eval", _vjepa2(True)),
    Job("emu3_vq_eval", _emu3(False)),
    Job("videomt_seg_eval", _videomt),
    Job("pp_doclayout_v2_layout_eval", _pp_doclayout_v2),
)}

JOBS: dict[str, Job] = _pick(
    _ALL, "deformable_detr_det_train", "rf_detr_seg_train", "slanext_table_eval", "radio_packed_eval",
    "lfm2_vl_eval", "vjepa2_masked_eval", "emu3_vq_eval",
)
"""The breaking jobs, each breaking at least once in its own family's code: Deformable DETR's own loss
(``loss/loss_deformable_detr.py``: ``nn.Module.__init__`` of ``DeformableDetrImageLoss`` skipped), RF-DETR's
instance-segmentation loss (``loss/loss_rf_detr.py``: its mask-aware Hungarian matcher with ``group_detr``,
``num_boxes.item()``), SLANeXt's table-structure decoding loop (``if ... .any(-1).all(): break`` on the predicted
tokens), RADIO's packed variable-resolution patch embedding (``image_grid_hw.tolist()``, ``split`` by tensor sizes)
and per-image feature selection (boolean-mask indexing), LFM2-VL's per-image token selection and split
(boolean-mask indexing, ``.tolist()`` split sizes), V-JEPA 2's predictor target tokens (``repeat`` by
``target_mask[0].max() + 1``) and Emu3's VQ-VAE crop of each image's code grid (``int(size[0] / factor)`` on a
tensor) and image-feature split. Deformable DETR and RF-DETR also break in DETR's shared loss helpers
(``loss_for_object_detection.py``), RF-DETR in LW-DETR's loss, LFM2-VL in SigLIP2's vision embeddings and both
LFM2-VL and Emu3 at a ``torch_compilable_check`` (placeholder mask). Caveats in ``docs/_third_vision.md``."""

NEAR_COPIES: dict[str, Job] = _pick(_ALL, "dab_detr_det_train")
"""Breaking jobs whose every break is at copied or shared code. DAB-DETR training: only Deformable DETR's loss
(``loss/loss_deformable_detr.py``, DAB-DETR is mapped to ``DeformableDetrForObjectDetectionLoss``) and DETR's
shared loss helpers; its own model code does not break."""

NOT_BREAKING: dict[str, Job] = _pick(
    _ALL, "beit_mim_train", "beit_mim_eval", "deformable_detr_det_eval", "deformable_detr_twostage_eval",
    "dab_detr_det_eval", "rf_detr_seg_eval", "videomt_seg_eval", "pp_doclayout_v2_layout_eval",
)
"""Measured with 0 graph breaks (explain: 1 graph) on torch 2.13 / transformers 5.25: not in :data:`JOBS`."""

NOT_BUILT: dict[str, str] = {
    "deformable_detr_twostage_train": "two-stage + box refinement in training: the same 19 graphs / 18 breaks, GB "
                                      "dict and sites as deformable_detr_det_train (the two-stage proposal code "
                                      "does not break), so it was not kept",
    "deformable_detr_one_decoder_layer": "DeformableDetrForObjectDetection with decoder_layers=1 and no box "
                                         "refinement fails in post_init (the bbox_embed tie pattern finds nothing "
                                         "to tie into); the jobs use 2 decoder layers",
    "lfm2_vl_train": "with labels: the same 14 graphs / 13 breaks and sites as lfm2_vl_eval (the loss is the shared "
                     "causal-LM loss), so only the eval job was kept",
    "emu3_vq_train": "with labels: the same 7 graphs / 6 breaks and sites as emu3_vq_eval, so only eval was kept",
    "vjepa2_video_eval": "V-JEPA 2 with the default (full) context / target masks: the same 6 graphs / 5 breaks at "
                         "the same line as vjepa2_masked_eval, so only the masked job was kept",
    "aria": "not built: Aria's only data-dependent code is its MoE experts loop (nonzero over hit experts), the "
            "generic Mixtral-style experts pattern of excluded families",
    "videomt_train": "VideomtForUniversalSegmentation raises ValueError on mask_labels / class_labels (training is "
                     "not supported for video inputs); only eval was measured",
}
"""Tried and dropped, or built differently, with the reason."""

MEASURABLE: dict[str, Job] = dict(_ALL)
"""Every job this file defines, the non-breaking ones included."""
