"""Transformers jobs of families the advisor was not built on (issue 27), measured; most break.

Object detection with its Hungarian-matched loss (DETR, YOLOS), segmentation (MaskFormer,
Mask2Former), keypoint detection and matching (SuperPoint, LightGlue, SuperGlue), depth (ZoeDepth,
DPT), video (VideoMAE, TimeSformer, ViViT), audio (CLAP, Whisper, SEW, UniSpeech), time series
(Autoformer, Informer, PatchTST, TimeSeriesTransformer) and byte-level / cross-lingual text (CANINE,
ByT5, ProphetNet, XLM). None is MoE. :data:`JOBS` and :data:`HELD_OUT` break; :data:`NOT_BREAKING`
compile whole. Same shape as :mod:`tests.models.corpus19`: a
:class:`~tests.models.corpus.Job` builds its model offline from a tiny config (random weights,
fixed seed) and returns it with its keyword inputs. Each job was measured with
``torch._dynamo.explain`` of one call in a fresh process; the baselines are written down in
``tests/models/test_corpus27_baseline.py`` and the advisor's table in ``docs/corpus.md``.
"""

from __future__ import annotations

from typing import Any

import torch

from tests.models.corpus import Job, _boxes, _ids, _mode

__all__ = ["BREAKING", "CANDIDATES", "HELD_OUT", "JOBS", "MEASURABLE", "NOT_BREAKING", "NOT_BUILT"]


def _resnet() -> Any:
    import transformers as T

    return T.ResNetConfig(num_channels=3, embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1],
                          layer_type="basic", out_features=["stage1", "stage2"])


def _detr(train: bool):
    def build():
        import transformers as T

        cfg = T.DetrConfig(use_timm_backbone=False, backbone_config=_resnet(), d_model=16, encoder_layers=1,
                           decoder_layers=1, encoder_attention_heads=2, decoder_attention_heads=2,
                           encoder_ffn_dim=32, decoder_ffn_dim=32, num_queries=6, num_labels=3,
                           dropout=0.0, auxiliary_loss=False)
        model = _mode(T.DetrForObjectDetection(cfg), train)
        inputs: dict[str, Any] = {"pixel_values": torch.randn(1, 3, 32, 32)}
        if train:
            inputs["labels"] = [_boxes(2, 3)]
        return model, inputs

    return build


def _yolos(train: bool):
    def build():
        import transformers as T

        cfg = T.YolosConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                            image_size=[32, 32], patch_size=8, num_detection_tokens=6, num_labels=3)
        model = _mode(T.YolosForObjectDetection(cfg), train)
        inputs: dict[str, Any] = {"pixel_values": torch.randn(1, 3, 32, 32)}
        if train:
            inputs["labels"] = [_boxes(2, 3)]
        return model, inputs

    return build


def _masks(n: int, size: int) -> torch.Tensor:
    return (torch.rand(n, size, size) > 0.5).float()


def _maskformer(train: bool):
    def build():
        import transformers as T

        decoder = dict(model_type="detr", d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                       decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, num_queries=6)
        backbone = T.SwinConfig(image_size=64, patch_size=4, embed_dim=8, depths=[1, 1, 1, 1], num_heads=[1, 1, 2, 2],
                                window_size=2, out_features=["stage1", "stage2", "stage3", "stage4"])
        cfg = T.MaskFormerConfig(backbone_config=backbone,
                                 decoder_config=decoder, fpn_feature_size=32, mask_feature_size=32, num_labels=3)
        model = _mode(T.MaskFormerForInstanceSegmentation(cfg), train)
        inputs: dict[str, Any] = {"pixel_values": torch.randn(1, 3, 64, 64)}
        if train:
            inputs["mask_labels"] = [_masks(2, 64)]
            inputs["class_labels"] = [torch.tensor([0, 2])]
        return model, inputs

    return build


def _mask2former(train: bool):
    def build():
        import transformers as T

        backbone = T.SwinConfig(image_size=64, patch_size=4, embed_dim=8, depths=[1, 1, 1, 1], num_heads=[1, 1, 2, 2],
                                window_size=2, out_features=["stage1", "stage2", "stage3", "stage4"])
        cfg = T.Mask2FormerConfig(backbone_config=backbone, feature_size=32, mask_feature_size=32, hidden_dim=32,
                                  encoder_feedforward_dim=32, encoder_layers=1, decoder_layers=2,
                                  num_attention_heads=2, dim_feedforward=32, num_queries=6, num_labels=3,
                                  train_num_points=64)
        model = _mode(T.Mask2FormerForUniversalSegmentation(cfg), train)
        inputs: dict[str, Any] = {"pixel_values": torch.randn(1, 3, 64, 64)}
        if train:
            inputs["mask_labels"] = [_masks(2, 64)]
            inputs["class_labels"] = [torch.tensor([0, 2])]
        return model, inputs

    return build


def _superpoint_cfg() -> dict[str, Any]:
    return dict(model_type="superpoint", encoder_hidden_sizes=[8, 8, 16, 16], decoder_hidden_size=16,
                keypoint_decoder_dim=65, descriptor_decoder_dim=16, keypoint_threshold=0.0, max_keypoints=16,
                nms_radius=1, border_removal_distance=2)


def _superpoint():
    import transformers as T

    cfg = T.SuperPointConfig(**{k: v for k, v in _superpoint_cfg().items() if k != "model_type"})
    return T.SuperPointForKeypointDetection(cfg).eval(), {"pixel_values": torch.rand(1, 3, 32, 32)}


def _lightglue():
    import transformers as T

    cfg = T.LightGlueConfig(keypoint_detector_config=_superpoint_cfg(), descriptor_dim=16, num_hidden_layers=2,
                            num_attention_heads=2)
    return T.LightGlueForKeypointMatching(cfg).eval(), {"pixel_values": torch.rand(1, 2, 3, 32, 32)}


def _superglue():
    import transformers as T

    cfg = T.SuperGlueConfig(keypoint_detector_config=_superpoint_cfg(), hidden_size=16,
                            keypoint_encoder_sizes=[8, 16], gnn_layers_types=["self", "cross"], num_attention_heads=2,
                            sinkhorn_iterations=5)
    return T.SuperGlueForKeypointMatching(cfg).eval(), {"pixel_values": torch.rand(1, 2, 3, 32, 32)}


def _dinov2_backbone(n: int = 4) -> Any:
    import transformers as T

    return T.Dinov2Config(hidden_size=16, num_hidden_layers=n, num_attention_heads=2, intermediate_size=32,
                          image_size=28, patch_size=14, out_indices=list(range(1, n + 1)),
                          reshape_hidden_states=False, apply_layernorm=True)


def _zoedepth():
    import transformers as T

    bins = [{"n_bins": 8, "min_depth": 1e-3, "max_depth": 10.0, "name": "nyu"}]
    cfg = T.ZoeDepthConfig(backbone_config=T.BeitConfig(
        hidden_size=16, num_hidden_layers=4, num_attention_heads=2, intermediate_size=32, image_size=32, patch_size=8,
        out_indices=[1, 2, 3, 4], use_relative_position_bias=True, reshape_hidden_states=False),
        neck_hidden_sizes=[8, 8, 16, 16], fusion_hidden_size=16, bottleneck_features=16, num_relative_features=8,
        num_attractors=[4, 4, 2, 1], bin_embedding_dim=8, bin_configurations=bins, reassemble_factors=[4, 2, 1, 0.5])
    return T.ZoeDepthForDepthEstimation(cfg).eval(), {"pixel_values": torch.randn(1, 3, 32, 32)}


def _dpt(train: bool):
    def build():
        import transformers as T

        cfg = T.DPTConfig(hidden_size=16, num_hidden_layers=4, num_attention_heads=2, intermediate_size=32,
                          image_size=32, patch_size=8, neck_hidden_sizes=[8, 8, 16, 16], fusion_hidden_size=16,
                          backbone_out_indices=[0, 1, 2, 3], reassemble_factors=[4, 2, 1, 0.5])
        model = _mode(T.DPTForDepthEstimation(cfg), train)
        inputs: dict[str, Any] = {"pixel_values": torch.randn(1, 3, 32, 32)}
        if train:
            inputs["labels"] = torch.rand(1, 32, 32) + 0.1
        return model, inputs

    return build


def _videomae_pretrain():
    import transformers as T

    cfg = T.VideoMAEConfig(image_size=16, patch_size=8, num_frames=4, tubelet_size=2, hidden_size=16,
                           num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, decoder_hidden_size=16,
                           decoder_num_hidden_layers=1, decoder_num_attention_heads=2, decoder_intermediate_size=32)
    model = T.VideoMAEForPreTraining(cfg).train()
    n = (16 // 8) ** 2 * (4 // 2)
    mask = torch.zeros(1, n, dtype=torch.bool)
    mask[0, torch.randperm(n)[: n // 2]] = True
    return model, {"pixel_values": torch.randn(1, 4, 3, 16, 16), "bool_masked_pos": mask}


def _timesformer(train: bool):
    def build():
        import transformers as T

        cfg = T.TimesformerConfig(image_size=16, patch_size=8, num_frames=2, hidden_size=16, num_hidden_layers=1,
                                  num_attention_heads=2, intermediate_size=32, num_labels=3)
        model = _mode(T.TimesformerForVideoClassification(cfg), train)
        inputs: dict[str, Any] = {"pixel_values": torch.randn(1, 2, 3, 16, 16)}
        if train:
            inputs["labels"] = torch.tensor([1])
        return model, inputs

    return build


def _vivit():
    import transformers as T

    cfg = T.VivitConfig(image_size=16, num_frames=4, tubelet_size=[2, 8, 8], hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, num_labels=3)
    return T.VivitForVideoClassification(cfg).eval(), {"pixel_values": torch.randn(1, 4, 3, 16, 16)}


def _clap_audio(fusion: bool):
    def build():
        import transformers as T

        cfg = T.ClapAudioConfig(window_size=4, num_mel_bins=16, spec_size=32, patch_size=4, patch_stride=[4, 4],
                                hidden_size=16, depths=[1, 1], num_attention_heads=[2, 2], patch_embeds_hidden_size=8,
                                num_hidden_layers=2, projection_dim=16, enable_fusion=fusion,
                                fusion_type="aff_2d" if fusion else None)
        model = T.ClapAudioModelWithProjection(cfg).eval()
        channels = 4 if fusion else 1
        inputs: dict[str, Any] = {"input_features": torch.randn(1, channels, 32, 16)}
        if fusion:
            inputs["is_longer"] = torch.tensor([[True]])
        return model, inputs

    return build


def _whisper(train: bool):
    def build():
        import transformers as T

        cfg = T.WhisperConfig(vocab_size=100, num_mel_bins=8, d_model=16, encoder_layers=1, decoder_layers=1,
                              encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
                              decoder_ffn_dim=32, max_source_positions=16, max_target_positions=32,
                              decoder_start_token_id=1, pad_token_id=0, eos_token_id=2, bos_token_id=1,
                              begin_suppress_tokens=None, suppress_tokens=None, mask_time_prob=0.5,
                              apply_spec_augment=train)
        model = _mode(T.WhisperForConditionalGeneration(cfg), train)
        inputs: dict[str, Any] = {"input_features": torch.randn(1, 8, 32)}
        if train:
            inputs["labels"] = _ids(6)
        else:
            inputs["decoder_input_ids"] = _ids(4)
        return model, inputs

    return build


def _speech(kind: str, train: bool):
    def build():
        import transformers as T

        config_cls, model_cls = {
            "sew": (T.SEWConfig, T.SEWForCTC),
            "unispeech": (T.UniSpeechConfig, T.UniSpeechForCTC),
        }[kind]
        cfg = config_cls(
            vocab_size=20, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
            conv_dim=(8, 8), conv_stride=(4, 2), conv_kernel=(8, 4), num_conv_pos_embeddings=4,
            num_conv_pos_embedding_groups=2, mask_time_prob=0.5, mask_time_length=2, squeeze_factor=2,
            layerdrop=0.0, pad_token_id=0,
        )
        model = _mode(model_cls(cfg), train)
        inputs: dict[str, Any] = {"input_values": torch.randn(1, 800)}
        if train:
            inputs["labels"] = torch.randint(1, 20, (1, 5))
        return model, inputs

    return build


def _series(kind: str, train: bool):
    """A time-series forecaster: context 16, prediction 4, 1 variate, lags (1, 2, 3), 1 time feature."""

    def build():
        import transformers as T

        config_cls, model_cls, extra = {
            "autoformer": (T.AutoformerConfig, T.AutoformerForPrediction, dict(moving_average=5,
                                                                             autocorrelation_factor=1)),
            "informer": (T.InformerConfig, T.InformerForPrediction, dict(sampling_factor=2)),
            "tst": (T.TimeSeriesTransformerConfig, T.TimeSeriesTransformerForPrediction, {}),
        }[kind]
        cfg = config_cls(prediction_length=4, context_length=16, lags_sequence=[1, 2, 3], num_time_features=1,
                         d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                         decoder_attention_heads=2, encoder_ffn_dim=16, decoder_ffn_dim=16, encoder_layerdrop=0.0,
                         decoder_layerdrop=0.0, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
                         **extra)
        model = _mode(model_cls(cfg), train)
        past = 16 + 3
        inputs = {
            "past_values": torch.randn(1, past).abs() + 0.5,
            "past_time_features": torch.arange(past, dtype=torch.float32).reshape(1, past, 1) / past,
            "past_observed_mask": torch.ones(1, past),
            "future_values": torch.randn(1, 4).abs() + 0.5,
            "future_time_features": torch.arange(past, past + 4, dtype=torch.float32).reshape(1, 4, 1) / past,
        }
        return model, inputs

    return build


def _patchtst_pretrain():
    import transformers as T

    cfg = T.PatchTSTConfig(num_input_channels=2, context_length=16, patch_length=4, patch_stride=4, num_hidden_layers=1,
                           d_model=16, num_attention_heads=2, ffn_dim=32, do_mask_input=True, mask_type="random",
                           random_mask_ratio=0.5)
    return T.PatchTSTForPretraining(cfg).train(), {"past_values": torch.randn(1, 16, 2)}


def _canine():
    import transformers as T

    cfg = T.CanineConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                         max_position_embeddings=64, num_hash_buckets=64, num_hash_functions=2, downsampling_rate=2,
                         local_transformer_stride=8)
    return T.CanineModel(cfg).eval(), {"input_ids": torch.randint(0, 1000, (1, 16))}


def _byt5(train: bool):
    def build():
        import transformers as T

        cfg = T.T5Config(vocab_size=260, d_model=16, d_kv=8, d_ff=32, num_layers=1, num_decoder_layers=1, num_heads=2,
                         feed_forward_proj="gated-gelu", decoder_start_token_id=0, pad_token_id=0)
        model = _mode(T.T5ForConditionalGeneration(cfg), train)
        return model, {"input_ids": _ids(12, 260), "labels": _ids(6, 260)}

    return build


def _prophetnet():
    import transformers as T

    cfg = T.ProphetNetConfig(vocab_size=100, hidden_size=16, encoder_ffn_dim=32, decoder_ffn_dim=32,
                                num_encoder_layers=1, num_decoder_layers=1, num_encoder_attention_heads=2,
                                num_decoder_attention_heads=2, ngram=2, num_buckets=8, relative_max_distance=16,
                                max_position_embeddings=64, decoder_start_token_id=0, pad_token_id=0)
    return T.ProphetNetForConditionalGeneration(cfg).eval(), {"input_ids": _ids(8), "labels": _ids(6)}


def _xlm():
    import transformers as T

    cfg = T.XLMConfig(vocab_size=100, emb_dim=16, n_layers=1, n_heads=2, n_langs=2, use_lang_emb=True,
                      max_position_embeddings=64, pad_index=2)
    ids = _ids(8)
    ids[ids == 2] = 3
    return T.XLMWithLMHeadModel(cfg).eval(), {"input_ids": ids, "langs": torch.ones(1, 8, dtype=torch.long)}


_ALL: dict[str, Job] = {j.name: j for j in (
    Job("detr_train", _detr(True)),
    Job("detr_eval", _detr(False)),
    Job("yolos_train", _yolos(True)),
    Job("maskformer_train", _maskformer(True)),
    Job("mask2former_train", _mask2former(True)),
    Job("mask2former_eval", _mask2former(False)),
    Job("superpoint_eval", _superpoint),
    Job("lightglue_eval", _lightglue),
    Job("superglue_eval", _superglue),
    Job("zoedepth_eval", _zoedepth),
    Job("dpt_eval", _dpt(False)),
    Job("videomae_pretrain", _videomae_pretrain),
    Job("timesformer_train", _timesformer(True)),
    Job("vivit_eval", _vivit),
    Job("clap_audio_eval", _clap_audio(False)),
    Job("clap_audio_fusion_eval", _clap_audio(True)),
    Job("whisper_train", _whisper(True)),
    Job("whisper_eval", _whisper(False)),
    Job("sew_train", _speech("sew", True)),
    Job("unispeech_train", _speech("unispeech", True)),
    Job("autoformer_train", _series("autoformer", True)),
    Job("autoformer_eval", _series("autoformer", False)),
    Job("informer_train", _series("informer", True)),
    Job("time_series_transformer_train", _series("tst", True)),
    Job("patchtst_pretrain", _patchtst_pretrain),
    Job("canine_eval", _canine),
    Job("byt5_train", _byt5(True)),
    Job("prophetnet_eval", _prophetnet),
    Job("xlm_eval", _xlm),
)}


def _pick(*names: str) -> tuple[Job, ...]:
    return tuple(_ALL[n] for n in names)


CANDIDATES: tuple[Job, ...] = _pick(
    "detr_train", "maskformer_train", "mask2former_train", "superpoint_eval", "lightglue_eval", "whisper_train",
    "sew_train", "unispeech_train", "autoformer_train", "prophetnet_eval", "xlm_eval", "clap_audio_fusion_eval",
)
"""The breaking jobs the remedies may be developed on (explain, torch 2.13 / transformers 5.24: 2-25 graphs)."""

HELD_OUT: tuple[Job, ...] = _pick("yolos_train", "superglue_eval", "videomae_pretrain")
"""Breaking jobs kept aside before the advisor was run on this file, their figures reported apart: a
second detector with DETR's loss (YOLOS), a second matcher (SuperGlue), and the only video job (VideoMAE)."""

NOT_BREAKING: tuple[Job, ...] = _pick(
    "detr_eval", "mask2former_eval", "zoedepth_eval", "dpt_eval", "timesformer_train", "vivit_eval",
    "clap_audio_eval", "whisper_eval", "autoformer_eval", "informer_train", "time_series_transformer_train",
    "patchtst_pretrain", "canine_eval", "byt5_train",
)
"""Measured with 0 graph breaks (explain: 1 graph) on torch 2.13 / transformers 5.24: not in :data:`JOBS`.
Depth estimation (ZoeDepth, DPT), TimeSformer, ViViT, Informer (ProbSparse attention),
TimeSeriesTransformer, PatchTST pretraining, CANINE and ByT5 compile whole from these configs; DETR,
Mask2Former, Whisper and Autoformer break only in the mode their job above uses (training, or a loss)."""

NOT_BUILT: tuple[str, ...] = ("dpt_train", "xlm_prophetnet_eval")
"""Tried and dropped: DPT's depth head has no training loss (``NotImplementedError``); XLM-ProphetNet is
no longer in transformers 5.x (ProphetNet, the same model code, is :data:`JOBS`' ``prophetnet_eval``)."""

JOBS: dict[str, Job] = {j.name: j for j in CANDIDATES}
"""The jobs of this file the advisor's remedies may be developed on (each breaks at baseline)."""

BREAKING: dict[str, Job] = {**JOBS, **{j.name: j for j in HELD_OUT}}
"""Every breaking job of this file, the held-out ones last."""

MEASURABLE: dict[str, Job] = dict(_ALL)
"""Every job this file defines, the non-breaking ones included."""
