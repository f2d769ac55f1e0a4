"""More breaking transformers jobs (issue 19): audio codecs, MoE routers, vision-language models.

Same shape as :mod:`tests.models.corpus` (a :class:`~tests.models.corpus.Job` builds its model
offline from a tiny config, random weights, fixed seed, and returns it with its keyword inputs).
Each job here was measured with ``torch._dynamo.explain`` in a fresh process and breaks; the
baseline figures are written down in ``tests/models/test_corpus19_baseline.py`` and the advisor's
table in ``docs/corpus.md`` (``benchmarks/advisor_corpus.py``).
"""

from __future__ import annotations

from typing import Any

import torch

from tests.models.corpus import JOBS as CORPUS_JOBS
from tests.models.corpus import Job, _ids

__all__ = ["ALL_JOBS", "JOBS", "MEASURABLE", "NOT_BREAKING", "UNSEEN"]

_LM = dict(
    vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
    num_key_value_heads=2, max_position_embeddings=64,
)
_MOE = dict(_LM, num_local_experts=4, num_experts_per_tok=2)
_EAGER = dict(experts_implementation="eager")
"""transformers 5.x runs MoE experts with ``grouped_mm`` by default, which compiles in one graph
(measured: Mixtral, Qwen2-MoE, Qwen3-MoE, OLMoE, GPT-OSS, Granite-MoE, PhiMoE, DeepSeek-V3: 1 graph,
0 breaks). The MoE jobs here use the ``eager`` experts (a Python loop over the experts ``nonzero``
finds), which a user selects with ``experts_implementation="eager"``; that loop is the router break."""


def _lm(config: str, model: str, n: int = 8, train: bool = False, **kw: Any):
    """A decoder-only model (``T.<config>(**kw)``, ``T.<model>``) on ``n`` random token ids."""

    def build():
        import transformers as T

        m = getattr(T, model)(getattr(T, config)(**kw))
        return (m.train() if train else m.eval()), {"input_ids": _ids(n)}

    return build


def _encodec():
    import transformers as T

    cfg = T.EncodecConfig(
        hidden_size=16, num_filters=4, num_residual_layers=1, upsampling_ratios=[8, 5, 4, 2], codebook_size=16,
        codebook_dim=16, num_lstm_layers=1, target_bandwidths=[1.5],
    )
    return T.EncodecModel(cfg).eval(), {"input_values": torch.randn(1, 1, 1600)}


def _dac():
    import transformers as T

    cfg = T.DacConfig(
        encoder_hidden_size=4, downsampling_ratios=[2, 2], decoder_hidden_size=16, n_codebooks=2,
        codebook_size=16, codebook_dim=4, hidden_size=16,
    )
    return T.DacModel(cfg).eval(), {"input_values": torch.randn(1, 1, 400)}


def _speecht5_asr():
    import transformers as T

    cfg = T.SpeechT5Config(
        vocab_size=40, hidden_size=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, conv_dim=(8, 8), conv_stride=(4, 2),
        conv_kernel=(8, 4), num_conv_pos_embeddings=4, num_conv_pos_embedding_groups=2,
        speech_decoder_prenet_units=16, speech_decoder_postnet_units=16, speech_decoder_postnet_layers=1,
        num_mel_bins=8, mask_time_prob=0.0,
    )
    model = T.SpeechT5ForSpeechToText(cfg).eval()
    return model, {"input_values": torch.randn(1, 800), "decoder_input_ids": _ids(4, 40)}


def _speecht5_tts():
    import transformers as T

    cfg = T.SpeechT5Config(
        vocab_size=40, hidden_size=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, speech_decoder_prenet_units=16,
        speech_decoder_postnet_units=16, speech_decoder_postnet_layers=1, num_mel_bins=8, speaker_embedding_dim=8,
    )
    model = T.SpeechT5ForTextToSpeech(cfg).eval()
    inputs = {"input_ids": _ids(8, 40), "decoder_input_values": torch.randn(1, 4, 8),
              "speaker_embeddings": torch.randn(1, 8)}
    return model, inputs


def _vlm_text() -> dict[str, Any]:
    return dict(_LM, model_type="llama")


def _llava():
    import transformers as T

    vision = dict(model_type="clip_vision_model", hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                  num_attention_heads=2, image_size=8, patch_size=4, projection_dim=16)
    cfg = T.LlavaConfig(vision_config=vision, text_config=_vlm_text(), image_token_id=99,
                        vision_feature_layer=-1, projector_hidden_act="gelu")
    model = T.LlavaForConditionalGeneration(cfg).eval()
    ids = _ids(12, 90)
    ids[0, 1:6] = 99  # 4 patches + cls dropped: 4 image tokens under 'default' strategy
    ids[0, 5] = 7
    return model, {"input_ids": ids, "pixel_values": torch.randn(1, 3, 8, 8)}


def _paligemma():
    import transformers as T

    vision = dict(model_type="siglip_vision_model", hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                  num_attention_heads=2, image_size=8, patch_size=4, projection_dim=16)
    text = dict(_LM, model_type="gemma", head_dim=8)
    cfg = T.PaliGemmaConfig(vision_config=vision, text_config=text, image_token_id=99, projection_dim=16)
    model = T.PaliGemmaForConditionalGeneration(cfg).eval()
    ids = _ids(10, 90)
    ids[0, :4] = 99
    return model, {"input_ids": ids, "pixel_values": torch.randn(1, 3, 8, 8)}


def _qwen2_vl():
    import transformers as T

    vision = dict(depth=1, embed_dim=16, hidden_size=16, num_heads=2, mlp_ratio=2, patch_size=2,
                  spatial_merge_size=2, temporal_patch_size=2, in_channels=3)
    text = dict(_LM, rope_scaling={"type": "mrope", "mrope_section": [1, 1, 2]}, head_dim=8)
    cfg = T.Qwen2VLConfig(vision_config=vision, text_config=text, image_token_id=99, vision_start_token_id=98,
                          video_token_id=97)
    model = T.Qwen2VLForConditionalGeneration(cfg).eval()
    # one 4x4 patch grid (t=1), merged 2x2: 4 image tokens
    ids = _ids(12, 90)
    ids[0, 2] = 98
    ids[0, 3:7] = 99
    grid = torch.tensor([[1, 4, 4]])
    pixels = torch.randn(16, 3 * 2 * 2 * 2)
    mm = (ids == 99).long()
    return model, {"input_ids": ids, "pixel_values": pixels, "image_grid_thw": grid, "mm_token_type_ids": mm}


def _idefics2():
    import transformers as T

    vision = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                  image_size=8, patch_size=4)
    perceiver = dict(hidden_act="silu", resampler_n_latents=4, resampler_depth=1, resampler_n_heads=2,
                     resampler_head_dim=8, num_key_value_heads=2)
    text = dict(_LM, model_type="mistral")
    cfg = T.Idefics2Config(vision_config=vision, perceiver_config=perceiver, text_config=text,
                           image_token_id=99)
    model = T.Idefics2ForConditionalGeneration(cfg).eval()
    ids = _ids(10, 90)
    ids[0, 1:5] = 99
    return model, {"input_ids": ids, "pixel_values": torch.randn(1, 1, 3, 8, 8)}


def _idefics3():
    import transformers as T

    vision = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                  image_size=8, patch_size=2)
    text = dict(_LM, model_type="llama")
    cfg = T.Idefics3Config(vision_config=vision, text_config=text, image_token_id=99, scale_factor=2)
    model = T.Idefics3ForConditionalGeneration(cfg).eval()
    ids = _ids(10, 90)
    ids[0, 1:5] = 99
    return model, {"input_ids": ids, "pixel_values": torch.randn(1, 1, 3, 8, 8)}


def _funnel():
    import transformers as T

    cfg = T.FunnelConfig(vocab_size=100, d_model=16, n_head=2, d_head=8, d_inner=32, block_sizes=[1, 1],
                         num_decoder_layers=1)
    return T.FunnelModel(cfg).eval(), {"input_ids": _ids(8)}


def _xlnet():
    import transformers as T

    cfg = T.XLNetConfig(vocab_size=100, d_model=16, n_layer=1, n_head=2, d_inner=32)
    return T.XLNetModel(cfg).eval(), {"input_ids": _ids(8)}


def _deberta_v2():
    import transformers as T

    cfg = T.DebertaV2Config(vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                            intermediate_size=32, max_position_embeddings=64, relative_attention=True,
                            pos_att_type=["p2c", "c2p"], position_buckets=8)
    return T.DebertaV2Model(cfg).eval(), {"input_ids": _ids(8)}


def _mra():
    import transformers as T

    cfg = T.MraConfig(vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                      intermediate_size=32, max_position_embeddings=64, block_per_row=2, approx_mode="full")
    return T.MraModel(cfg).eval(), {"input_ids": _ids(32)}


def _perceiver():
    import transformers as T

    cfg = T.PerceiverConfig(num_latents=4, d_latents=16, d_model=16, num_blocks=1, num_self_attends_per_block=1,
                            num_self_attention_heads=2, num_cross_attention_heads=2, vocab_size=100,
                            max_position_embeddings=64)
    return T.PerceiverForMaskedLM(cfg).eval(), {"input_ids": _ids(8)}


def _mamba():
    import transformers as T

    cfg = T.MambaConfig(vocab_size=100, hidden_size=16, state_size=4, num_hidden_layers=1, expand=2,
                        conv_kernel=4, time_step_rank=4)
    return T.MambaModel(cfg).eval(), {"input_ids": _ids(8)}


CANDIDATES: tuple[Job, ...] = (
    Job("encodec_eval", _encodec),
    Job("mixtral_eval", _lm("MixtralConfig", "MixtralModel", **_MOE, **_EAGER)),
    Job("mixtral_train", _lm("MixtralConfig", "MixtralModel", train=True, **_MOE, **_EAGER)),
    Job("qwen2_moe_eval", _lm("Qwen2MoeConfig", "Qwen2MoeModel", **dict(
        _LM, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16, shared_expert_intermediate_size=16, **_EAGER))),
    Job("qwen3_moe_eval", _lm("Qwen3MoeConfig", "Qwen3MoeModel", **dict(
        _LM, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16, head_dim=8, **_EAGER))),
    Job("olmoe_eval", _lm("OlmoeConfig", "OlmoeModel", **dict(_LM, num_experts=4, num_experts_per_tok=2, **_EAGER))),
    Job("gpt_oss_eval", _lm("GptOssConfig", "GptOssModel", **dict(_MOE, head_dim=8, layer_types=["full_attention"], **_EAGER))),
    Job("jetmoe_eval", _lm("JetMoeConfig", "JetMoeModel", vocab_size=100, hidden_size=16, num_hidden_layers=1,
                           num_key_value_heads=2, kv_channels=8, intermediate_size=32, num_local_experts=4,
                           num_experts_per_tok=2, max_position_embeddings=64)),
    Job("granitemoe_eval", _lm("GraniteMoeConfig", "GraniteMoeModel", **_MOE, **_EAGER)),
    Job("phimoe_eval", _lm("PhimoeConfig", "PhimoeModel", **_MOE, **_EAGER)),
    Job("deepseek_v3_eval", _lm("DeepseekV3Config", "DeepseekV3Model", **dict(
        _LM, n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=16, n_shared_experts=1,
        first_k_dense_replace=0, kv_lora_rank=8, q_lora_rank=8, qk_rope_head_dim=4, qk_nope_head_dim=4,
        v_head_dim=8, n_group=1, topk_group=1, **_EAGER))),
    Job("llava_eval", _llava),
    Job("paligemma_eval", _paligemma),
    Job("qwen2_vl_eval", _qwen2_vl),
    Job("idefics2_eval", _idefics2),
    Job("idefics3_eval", _idefics3),
    Job("mra_eval", _mra),
)

NOT_BREAKING: tuple[Job, ...] = (
    Job("mixtral_grouped_mm_eval", _lm("MixtralConfig", "MixtralModel", **_MOE)),
    Job("dac_eval", _dac),
    Job("speecht5_asr_eval", _speecht5_asr),
    Job("speecht5_tts_eval", _speecht5_tts),
    Job("funnel_eval", _funnel),
    Job("xlnet_eval", _xlnet),
    Job("deberta_v2_eval", _deberta_v2),
    Job("perceiver_eval", _perceiver),
    Job("mamba_eval", _mamba),
)
"""Candidates measured with 0 graph breaks (explain: 1 graph) on torch 2.13 / transformers 5.24: not
in :data:`JOBS`; kept to re-measure with ``benchmarks/advisor_corpus.py --jobs`` on other versions."""

UNSEEN: tuple[Job, ...] = (
    Job("ernie4_5_moe_eval", _lm("Ernie4_5_MoeConfig", "Ernie4_5_MoeModel", **dict(
        _LM, moe_num_experts=4, moe_k=2, moe_intermediate_size=16, moe_layer_start_index=0, **_EAGER))),
    Job("glm4_moe_eval", _lm("Glm4MoeConfig", "Glm4MoeModel", **dict(
        _LM, n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=16, first_k_dense_replace=0, n_group=1,
        topk_group=1, head_dim=8, **_EAGER))),
    Job("hunyuan_v1_moe_eval", _lm("HunYuanMoEV1Config", "HunYuanMoEV1Model", **dict(
        _LM, num_experts=4, moe_topk=2, head_dim=8, **_EAGER))),
    Job("deepseek_v2_eval", _lm("DeepseekV2Config", "DeepseekV2Model", **dict(
        _LM, n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=16, first_k_dense_replace=0, kv_lora_rank=8,
        q_lora_rank=8, qk_rope_head_dim=4, qk_nope_head_dim=4, v_head_dim=8, n_group=1, topk_group=1, **_EAGER))),
    Job("minimax_eval", _lm("MiniMaxConfig", "MiniMaxModel", **dict(
        _MOE, head_dim=8, layer_types=["full_attention"], **_EAGER))),
    Job("lfm2_moe_eval", _lm("Lfm2MoeConfig", "Lfm2MoeModel", **dict(
        _LM, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16, num_dense_layers=0,
        layer_types=["full_attention"], **_EAGER))),
    Job("qwen3_next_eval", _lm("Qwen3NextConfig", "Qwen3NextModel", **dict(
        _LM, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16, head_dim=8, layer_types=["full_attention"],
        shared_expert_intermediate_size=16, **_EAGER))),
    Job("cohere2_moe_eval", _lm("Cohere2MoeConfig", "Cohere2MoeModel", **dict(
        _LM, num_experts=4, num_experts_per_tok=2, **_EAGER))),
)
"""Held out: MoE models of transformers 5.24 that no remedy was developed or tested on (found after
the corpus's table was measured), each breaking at baseline (explain, torch 2.13: 7-10 graphs); for
``benchmarks/advisor_corpus.py --jobs``. Not in :data:`ALL_JOBS` (the corpus table)."""

JOBS: dict[str, Job] = {j.name: j for j in CANDIDATES}
"""The jobs of this file (kept: each breaks at baseline)."""

ALL_JOBS: dict[str, Job] = {**CORPUS_JOBS, **JOBS}
"""Both corpora: ``tests/models/corpus.py`` and this file."""

MEASURABLE: dict[str, Job] = {**ALL_JOBS, **{j.name: j for j in (*NOT_BREAKING, *UNSEEN)}}
"""Every job either file defines, the non-breaking candidates included."""
