"""Seventh held-out set, vision part: filled in by the scan of 2026-12-05 (see docs/corpus-seventh-scan.md).

The scan found only one vision family that no earlier corpus or scan touches and that breaks in its own code: TrOCR,
the text-recognition decoder of a vision encoder-decoder, trained with gradient checkpointing (its own
``TrOCRDecoder.forward`` calls ``logger.warning_once`` when ``use_cache`` meets gradient checkpointing in training),
both inside a ``VisionEncoderDecoderModel`` with a ViT encoder and as a standalone ``TrOCRForCausalLM`` over given image
features. Every other unused vision family that was built compiles whole in eval and, where it has a loss, in
training, or breaks only at a used family's code or at shared helpers. Families were chosen only by novelty (no job of
the family in an earlier corpus, not named in the earlier scans, breaking code not copied from a used family) and by
breaking in their own code, without reading or running the advisor. :data:`JOBS` break, each at least once in its own
family's modeling file; :data:`NEAR_COPIES` break too, but only at a used family's code (PaliGemma) or at shared helpers
(``torch_compilable_check``); :data:`NOT_BREAKING` compile whole. Same shape as :mod:`tests.models.corpus_sixth_vision`:
a :class:`~tests.models.corpus.Job` builds its model offline from a tiny config (random weights, nothing downloaded;
:meth:`~tests.models.corpus.Job.make` seeds torch, numpy and random with 0 before ``build``) and returns it with its
keyword inputs. Each job was measured with ``python -m tests.models.explain_check_seventh JOB``
(``OMP_NUM_THREADS=1``) on torch 2.13 / transformers 5.25.0, twice in separate processes, with the same counts both
times; figures and break sites are in ``docs/corpus-seventh-scan.md``.
"""

from __future__ import annotations

from typing import Any

import torch

from tests.models.corpus import Job, _ids, _mode, _pick

__all__ = ["JOBS", "MEASURABLE", "NEAR_COPIES", "NOT_BREAKING", "NOT_BUILT"]


def _vit(**extra: Any) -> dict[str, Any]:
    return dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, image_size=32,
                patch_size=8, **extra)


def _trocr_config():
    import transformers as T

    return T.TrOCRConfig(vocab_size=100, d_model=16, decoder_layers=1, decoder_attention_heads=2, decoder_ffn_dim=32,
                         max_position_embeddings=64, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                         decoder_start_token_id=2, is_decoder=True, add_cross_attention=True)


def _text_line_labels() -> torch.Tensor:
    """One text line of 6 tokens, then EOS (2) and one padded position (-100)."""
    labels = torch.randint(3, 100, (1, 8))
    labels[0, 6] = 2
    labels[0, 7] = -100
    return labels


def _trocr_ved(train: bool, checkpointing: bool):
    def build():
        import transformers as T

        cfg = T.VisionEncoderDecoderConfig.from_encoder_decoder_configs(T.ViTConfig(**_vit()), _trocr_config())
        cfg.decoder_start_token_id = 2
        cfg.pad_token_id = 1
        model = T.VisionEncoderDecoderModel(cfg)
        if checkpointing:
            model.gradient_checkpointing_enable()
        model = _mode(model, train)
        # one 32x32 text-line image (patch 8 -> 16 patches + CLS); the decoder inputs are the labels shifted right
        return model, {"pixel_values": torch.randn(1, 3, 32, 32), "labels": _text_line_labels()}

    return build


def _trocr_causal_lm(train: bool, checkpointing: bool):
    def build():
        import transformers as T

        model = T.TrOCRForCausalLM(_trocr_config())
        if checkpointing:
            model.gradient_checkpointing_enable()
        model = _mode(model, train)
        # teacher forcing over the features of one encoded text-line image (16 patches + CLS, width 16):
        # the decoder reads [start, t1..t7] and predicts [t1..t7, EOS]
        targets = torch.randint(3, 100, (1, 8))
        targets[0, 7] = 2
        ids = torch.cat([torch.tensor([[2]]), targets[:, :7]], dim=1)
        return model, {"input_ids": ids, "encoder_hidden_states": torch.randn(1, 17, 16), "labels": targets}

    return build


def _t5gemma2(train: bool):
    def build():
        import transformers as T

        text = dict(vocab_size=300, hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2,
                    num_key_value_heads=1, head_dim=8, max_position_embeddings=64, sliding_window=8,
                    layer_types=["sliding_attention", "full_attention"])
        vision = dict(model_type="siglip_vision_model", hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                      num_attention_heads=2, image_size=32, patch_size=8)
        encoder = dict(text_config=text, vision_config=vision, mm_tokens_per_image=4, boi_token_index=297,
                       eoi_token_index=298, image_token_index=299)
        cfg = T.T5Gemma2Config(encoder=encoder, decoder=dict(text), image_token_index=299, vocab_size=300)
        model = _mode(T.T5Gemma2ForConditionalGeneration(cfg), train)
        # one 32x32 image pooled to 4 soft tokens between BOI (297) and EOI (298) in a 12-token encoder prompt
        ids = _ids(12, 290)
        ids[0, 2] = 297
        ids[0, 3:7] = 299
        ids[0, 7] = 298
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": torch.ones(1, 12, dtype=torch.long),
                                  "pixel_values": torch.randn(1, 3, 32, 32)}
        if train:
            inputs["labels"] = _ids(6, 290)
        else:
            inputs["decoder_input_ids"] = _ids(6, 290)
        return model, inputs

    return build


def _colpali():
    import transformers as T

    vlm = dict(model_type="paligemma", image_token_id=99, projection_dim=16,
               text_config=dict(model_type="gemma", hidden_size=16, num_hidden_layers=1, intermediate_size=32,
                                num_attention_heads=2, num_key_value_heads=1, head_dim=8, vocab_size=100),
               vision_config=dict(model_type="siglip_vision_model", hidden_size=16, intermediate_size=32,
                                  num_hidden_layers=1, num_attention_heads=2, patch_size=8, image_size=32))
    model = T.ColPaliForRetrieval(T.ColPaliConfig(vlm_config=vlm, embedding_dim=8)).eval()
    # two 32x32 pages (patch 8 -> 16 image tokens each) in front of a 4-token prompt
    ids = _ids(20, 90).repeat(2, 1)
    ids[:, :16] = 99
    return model, {"input_ids": ids, "attention_mask": torch.ones(2, 20, dtype=torch.long),
                   "pixel_values": torch.randn(2, 3, 32, 32)}


def _pp_formulanet(train: bool):
    def build():
        import transformers as T

        vision = dict(hidden_size=16, output_channels=8, num_hidden_layers=2, num_attention_heads=2, image_size=64,
                      patch_size=16, window_size=2, global_attn_indexes=[1], mlp_dim=32, post_conv_in_channels=8,
                      post_conv_out_channels=16, post_conv_mid_channels=8, decoder_hidden_size=16)
        text = dict(vocab_size=100, max_position_embeddings=64, decoder_layers=1, decoder_ffn_dim=32,
                    decoder_attention_heads=2, d_model=16)
        model = _mode(T.PPFormulaNetForConditionalGeneration(T.PPFormulaNetConfig(vision_config=vision,
                                                                                  text_config=text)), train)
        # one 64x64 formula image; teacher forcing over 8 LaTeX tokens
        targets = _ids(8)
        ids = torch.cat([torch.tensor([[2]]), targets[:, :7]], dim=1)
        inputs: dict[str, Any] = {"pixel_values": torch.randn(1, 3, 64, 64), "decoder_input_ids": ids}
        if train:
            inputs["labels"] = targets
        return model, inputs

    return build


def _bridgetower_itm():
    import transformers as T

    # the vision tower uses nn.MultiheadAttention with hidden_size // 64 heads: width 64
    cfg = T.BridgeTowerConfig(text_config=dict(vocab_size=100, hidden_size=64, num_hidden_layers=2,
                                               num_attention_heads=2, intermediate_size=32,
                                               max_position_embeddings=64),
                              vision_config=dict(hidden_size=64, num_hidden_layers=2, image_size=32, patch_size=8),
                              hidden_size=64, num_hidden_layers=1, num_attention_heads=2)
    model = T.BridgeTowerForImageAndTextRetrieval(cfg).train()
    return model, {"input_ids": _ids(8), "attention_mask": torch.ones(1, 8, dtype=torch.long),
                   "pixel_values": torch.randn(1, 3, 32, 32), "labels": torch.tensor([1])}


def _pe_video():
    import transformers as T

    vision = T.ViTConfig(num_labels=16, **_vit())
    video = T.PeVideoEncoderConfig(vision_config=vision, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                   num_attention_heads=2, head_dim=8)
    text = dict(model_type="modernbert", vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                num_attention_heads=2, max_position_embeddings=64, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                cls_token_id=1, sep_token_id=2)
    model = T.PeVideoModel(T.PeVideoConfig(video_config=video, text_config=text)).train()
    # two clips of 4 frames of 32x32, the second one's last frame padded; two captions (sigmoid contrastive loss)
    frames = torch.ones(2, 4, dtype=torch.long)
    frames[1, 3] = 0
    return model, {"input_ids": _ids(8, 90).repeat(2, 1), "attention_mask": torch.ones(2, 8, dtype=torch.long),
                   "pixel_values_videos": torch.randn(2, 4, 3, 32, 32), "padding_mask_videos": frames,
                   "return_loss": True}


_ALL: dict[str, Job] = {j.name: j for j in (
    Job("trocr_ved_checkpointing_train", _trocr_ved(True, True)),
    Job("trocr_causal_lm_checkpointing_train", _trocr_causal_lm(True, True)),
    Job("trocr_ved_train", _trocr_ved(True, False)),
    Job("trocr_ved_eval", _trocr_ved(False, False)),
    Job("trocr_causal_lm_train", _trocr_causal_lm(True, False)),
    Job("t5gemma2_vlm_train", _t5gemma2(True)),
    Job("t5gemma2_vlm_eval", _t5gemma2(False)),
    Job("colpali_retrieval_eval", _colpali),
    Job("pp_formulanet_train", _pp_formulanet(True)),
    Job("pp_formulanet_eval", _pp_formulanet(False)),
    Job("bridgetower_itm_train", _bridgetower_itm),
    Job("pe_video_contrastive_train", _pe_video),
)}

JOBS: dict[str, Job] = _pick(_ALL, "trocr_ved_checkpointing_train", "trocr_causal_lm_checkpointing_train")
"""The breaking jobs, each breaking at least once in its own family's code: TrOCR trained with gradient checkpointing,
inside a ``VisionEncoderDecoderModel`` (ViT encoder) and as a standalone ``TrOCRForCausalLM``. Both break only in
``TrOCRDecoder.forward``, at ``logger.warning_once(`` under ``if self.gradient_checkpointing and self.training:`` /
``if use_cache:`` (``TrOCRConfig.use_cache`` defaults to True); the gradient-checkpointed layers themselves and the
vision encoder-decoder's own code (label shifting, loss) compile. Only one family: see the report for why the scan
found no others. Caveat: the warning under gradient checkpointing is an idiom many decoders share (TrOCR's block is
not marked ``# Copied from``, so it counts as its own code here)."""

NEAR_COPIES: dict[str, Job] = _pick(_ALL, "t5gemma2_vlm_train", "t5gemma2_vlm_eval", "colpali_retrieval_eval")
"""Breaking jobs whose every break is at a used family's code or at a shared helper: T5Gemma 2's image path breaks
only in the shared ``torch_compilable_check`` of its ``get_image_placeholder_mask`` (the Gemma 3 / LLaVA placeholder
check, reported at its own call line); ColPali breaks only in PaliGemma's ``get_placeholder_mask`` (used family,
same shared check)."""

NOT_BREAKING: dict[str, Job] = _pick(
    _ALL, "trocr_ved_train", "trocr_ved_eval", "trocr_causal_lm_train", "pp_formulanet_train", "pp_formulanet_eval",
    "bridgetower_itm_train", "pe_video_contrastive_train",
)
"""Measured with 0 graph breaks (explain: 1 graph) on torch 2.13 / transformers 5.25: not in :data:`JOBS`. TrOCR
without gradient checkpointing (vision encoder-decoder train and eval with labels, standalone causal LM train);
PP-FormulaNet's formula recognition (SAM-style vision encoder, MBart-style decoder) in train and eval; BridgeTower's
image-text matching in training; PE Video's video-text sigmoid contrastive loss with a padded frame."""

NOT_BUILT: dict[str, str] = {
    "vision_encoder_decoder": "built only as the container of the TrOCR jobs: its own code (label shifting, loss) "
                              "compiles",
    "instructblipvideo / sam3_tracker_video / sam3_lite_text / pe_video (encoder)": "read and skipped: modular copies "
                                                                                    "of InstructBLIP, SAM2 Video, SAM3 "
                                                                                    "and PE Audio-Video (used families)"
                                                                                    "; their own additions (frame "
                                                                                    "reshaping, a MobileOne text "
                                                                                    "encoder) have no data-dependent "
                                                                                    "code",
    "timm_wrapper / dinat": "not built: they need timm / natten, which are not installed",
    "glmga / pp_chart2table / nougat / layoutxlm": "not built: no modeling file of their own (GLM-4.6V, GOT-OCR2, "
                                                   "VisionEncoderDecoder with Donut-Swin + MBart, LayoutLMv2 models)",
    "llama4 / glm4v_moe / qwen3_vl_moe / ernie4_5_vl_moe / qwen3_5_moe / mistral_large4": "not built: MoE, excluded",
    "altclip / chinese_clip / metaclip_2 / align / vision_text_dual_encoder / mgp_str / pi05 / depth_anything / "
    "prompt_depth_anything / pp_ocrv5_mobile_det / pp_ocrv5_mobile_rec / convnext / convnextv2 / deit / efficientnet / "
    "ijepa / mobilenet_v1 / mobilenet_v2 / poolformer / pvt / pvt_v2 / regnet / swiftformer / vit_msn / bit / mobilevit "
    "/ dinov2_with_registers / donut / layoutlm / bridgetower (contrastive, MLM)":
        "probed (one explain in a scratch script, not the checker; train with labels or a contrastive loss where the "
        "model has one): 0 graph breaks, not added",
    "pp_ocrv5_server_det / pp_ocrv6_* / pp_lcnet*": "read and skipped: convolutional detectors, recognizers and "
                                                    "backbones with no data-dependent code and no loss",
}
"""Tried and dropped, or not built, with the reason."""

MEASURABLE: dict[str, Job] = dict(_ALL)
"""Every job this file defines, the non-breaking ones included."""
