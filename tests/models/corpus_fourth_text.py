"""Fourth held-out jobs outside vision: a quantized text encoder, a speech TTS text-to-unit model, a speech LM.

A fourth held-out set for the advisor (scan of 2026-12-05, torch 2.13 / transformers 5.25.0, CPU), from families none
of the earlier corpora touch: I-BERT with ``quant_mode=True`` (its integer-only ``quant_modules`` round-trip scales
through numpy with ``np.frexp(inputs.cpu().numpy())`` and assert on ``x_max.isnan().sum() == 0``), SeamlessM4T v2's
non-autoregressive text-to-unit model (``_hard_upsample`` repeats hidden states by character counts and by predicted
durations with a tensor-valued ``repeat_interleave``) and MOSS Transcribe-Diarize (encoder frames selected with the
boolean ``keep_mask`` in its own ``get_audio_features``). None is MoE. :data:`JOBS` break, each at least once in its
own family's code; :data:`NOT_BREAKING` compile whole (RWKV, xLSTM, Moonshine, HRM-Text, Dia, ESM C). Same shape as
:mod:`tests.models.corpus_third_text`: a :class:`~tests.models.corpus.Job` builds its model offline from a tiny config
(random weights, nothing downloaded; :meth:`~tests.models.corpus.Job.make` seeds torch, numpy and random with 0 before
``build``) and returns it in its mode with its keyword inputs. Each breaking job was measured with
``python -m tests.models.explain_check_fourth JOB`` (one eager call, then ``torch._dynamo.explain`` of one call, fresh
process, ``OMP_NUM_THREADS=1``) twice, with the same counts both times; the figures and the source line of every break
are in ``docs/corpus-fourth-scan.md``. The advisor was not run on any of them while they were chosen.
"""

from __future__ import annotations

from typing import Any

import torch

from tests.models.corpus import Job, _mode, _pick

__all__ = ["JOBS", "MEASURABLE", "NEAR_COPIES", "NOT_BREAKING", "NOT_BUILT"]


def _rwkv(train: bool):
    def build():
        import transformers as T

        cfg = T.RwkvConfig(vocab_size=100, context_length=32, hidden_size=16, num_hidden_layers=2,
                           attention_hidden_size=16, intermediate_size=32, rescale_every=1, use_cache=False)
        model = _mode(T.RwkvForCausalLM(cfg), train)
        ids = torch.randint(0, 100, (1, 10))
        inputs: dict[str, Any] = {"input_ids": ids}
        if train:
            inputs["labels"] = ids.clone()
        return model, inputs

    return build


def _xlstm(train: bool):
    def build():
        import transformers as T

        cfg = T.xLSTMConfig(vocab_size=100, hidden_size=16, num_hidden_layers=1, num_heads=2, chunk_size=4,
                            ffn_round_up_to_multiple_of=8, autocast_kernel_dtype="float32",
                            mode="train" if train else "inference", use_cache=False)
        model = _mode(T.xLSTMForCausalLM(cfg), train)
        ids = torch.randint(3, 100, (1, 8))
        inputs: dict[str, Any] = {"input_ids": ids}
        if train:
            inputs["labels"] = ids.clone()
        return model, inputs

    return build


def _moonshine(train: bool):
    def build():
        import transformers as T

        cfg = T.MoonshineConfig(vocab_size=100, hidden_size=16, intermediate_size=32, encoder_num_hidden_layers=1,
                                decoder_num_hidden_layers=1, encoder_num_attention_heads=2,
                                decoder_num_attention_heads=2, max_position_embeddings=64, pad_token_id=0,
                                use_cache=False)
        model = _mode(T.MoonshineForConditionalGeneration(cfg), train)
        mask = torch.ones(1, 2400, dtype=torch.long)
        mask[0, 2000:] = 0
        inputs: dict[str, Any] = {"input_values": torch.randn(1, 2400), "attention_mask": mask,
                                  "decoder_input_ids": torch.randint(3, 100, (1, 6))}
        if train:
            inputs["labels"] = torch.randint(3, 100, (1, 6))
            del inputs["decoder_input_ids"]
        return model, inputs

    return build


def _hrm_text(train: bool):
    def build():
        import transformers as T

        cfg = T.HrmTextConfig(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                              num_attention_heads=2, head_dim=8, max_position_embeddings=64, use_cache=False)
        model = _mode(T.HrmTextForCausalLM(cfg), train)
        ids = torch.randint(3, 100, (1, 8))
        inputs: dict[str, Any] = {"input_ids": ids}
        if train:
            inputs["labels"] = ids.clone()
        return model, inputs

    return build


def _seamless_v2_t2u(train: bool):
    def build():
        import transformers as T

        cfg = T.SeamlessM4Tv2Config(vocab_size=100, t2u_vocab_size=50, char_vocab_size=40, hidden_size=16,
                                    max_position_embeddings=64, t2u_max_position_embeddings=64,
                                    t2u_encoder_layers=1, t2u_encoder_ffn_dim=32, t2u_encoder_attention_heads=2,
                                    t2u_decoder_layers=1, t2u_decoder_ffn_dim=32, t2u_decoder_attention_heads=2,
                                    t2u_variance_predictor_embed_dim=16, t2u_variance_predictor_hidden_dim=16,
                                    encoder_layers=1, decoder_layers=1, speech_encoder_layers=1,
                                    encoder_ffn_dim=32, decoder_ffn_dim=32, speech_encoder_intermediate_size=32,
                                    encoder_attention_heads=2, decoder_attention_heads=2,
                                    speech_encoder_attention_heads=2, encoder_layerdrop=0.0, decoder_layerdrop=0.0)
        from transformers.models.seamless_m4t_v2.modeling_seamless_m4t_v2 import (
            SeamlessM4Tv2TextToUnitForConditionalGeneration as T2U,
        )

        model = _mode(T2U(cfg), train)
        counts = torch.tensor([[2, 1, 3, 2, 1]])  # characters per text token -> 9 characters
        inputs: dict[str, Any] = {"inputs_embeds": torch.randn(1, 5, 16),  # the text decoder's states
                                  "attention_mask": torch.ones(1, 5, dtype=torch.long),
                                  "char_input_ids": torch.randint(3, 40, (1, 9)), "char_count_per_id": counts}
        return model, inputs

    return build


def _dia(train: bool):
    def build():
        import transformers as T

        enc = dict(max_position_embeddings=32, num_hidden_layers=1, hidden_size=16, num_attention_heads=2,
                   num_key_value_heads=2, head_dim=8, intermediate_size=32, vocab_size=256)
        dec = dict(max_position_embeddings=32, num_hidden_layers=1, hidden_size=16, intermediate_size=32,
                   num_attention_heads=2, num_key_value_heads=1, head_dim=8, cross_num_attention_heads=2,
                   cross_head_dim=8, cross_num_key_value_heads=2, cross_hidden_size=16, vocab_size=40,
                   num_channels=3, pad_token_id=37, eos_token_id=36, bos_token_id=38)
        cfg = T.DiaConfig(encoder_config=enc, decoder_config=dec, delay_pattern=[0, 1, 2], use_cache=False)
        model = _mode(T.DiaForConditionalGeneration(cfg), train)
        inputs: dict[str, Any] = {"input_ids": torch.randint(0, 256, (1, 8)),
                                  "attention_mask": torch.ones(1, 8, dtype=torch.long),
                                  "decoder_input_ids": torch.randint(0, 36, (1, 6, 3))}
        if train:
            inputs["labels"] = torch.randint(0, 36, (1, 6, 3))
        return model, inputs

    return build


def _esmc(train: bool):
    def build():
        import transformers as T

        cfg = T.EsmcConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                           num_attention_heads=2, max_position_embeddings=64)
        model = _mode(T.EsmcForMaskedLM(cfg), train)
        ids = torch.randint(4, 30, (1, 10))
        ids[0, 0], ids[0, -1] = 0, 2
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": torch.ones(1, 10, dtype=torch.long)}
        if train:
            inputs["labels"] = ids.clone()
        return model, inputs

    return build


def _ibert(train: bool):
    def build():
        import transformers as T

        cfg = T.IBertConfig(vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                            intermediate_size=32, max_position_embeddings=64, quant_mode=True)
        model = _mode(T.IBertForMaskedLM(cfg), train)
        ids = torch.randint(3, 100, (1, 8))
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": torch.ones(1, 8, dtype=torch.long)}
        if train:
            inputs["labels"] = ids.clone()
        return model, inputs

    return build


def _moss_asr(train: bool):
    def build():
        import transformers as T

        audio = dict(num_mel_bins=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                     hidden_size=16, max_source_positions=16)
        text = dict(model_type="qwen3", vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                    num_attention_heads=2, num_key_value_heads=1, head_dim=8, max_position_embeddings=64)
        cfg = T.MossTranscribeDiarizeConfig(audio_config=audio, text_config=text, audio_token_id=99,
                                            audio_merge_size=4)
        model = _mode(T.MossTranscribeDiarizeForConditionalGeneration(cfg), train)
        feats_mask = torch.ones(1, 32, dtype=torch.long)
        feats_mask[0, 24:] = 0  # 24 valid frames -> 12 encoder frames kept -> 3 merged audio tokens
        ids = torch.randint(3, 90, (1, 10))
        ids[0, 2:5] = 99
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": torch.ones(1, 10, dtype=torch.long),
                                  "input_features": torch.randn(1, 8, 32), "input_features_mask": feats_mask}
        if train:
            inputs["labels"] = torch.randint(3, 90, (1, 10))
        return model, inputs

    return build


_ALL: dict[str, Job] = {j.name: j for j in (
    Job("ibert_quant_mlm_train", _ibert(True)),
    Job("ibert_quant_mlm_eval", _ibert(False)),
    Job("seamless_m4t_v2_t2u_train", _seamless_v2_t2u(True)),
    Job("seamless_m4t_v2_t2u_eval", _seamless_v2_t2u(False)),
    Job("moss_transcribe_diarize_train", _moss_asr(True)),
    Job("moss_transcribe_diarize_eval", _moss_asr(False)),
    Job("rwkv_causal_lm_train", _rwkv(True)),
    Job("rwkv_causal_lm_eval", _rwkv(False)),
    Job("xlstm_causal_lm_train", _xlstm(True)),
    Job("xlstm_causal_lm_eval", _xlstm(False)),
    Job("moonshine_asr_train", _moonshine(True)),
    Job("hrm_text_causal_lm_train", _hrm_text(True)),
    Job("dia_tts_train", _dia(True)),
    Job("esmc_mlm_train", _esmc(True)),
)}

JOBS: dict[str, Job] = _pick(
    _ALL, "ibert_quant_mlm_train", "ibert_quant_mlm_eval", "seamless_m4t_v2_t2u_train", "seamless_m4t_v2_t2u_eval",
    "moss_transcribe_diarize_train", "moss_transcribe_diarize_eval",
)
"""The breaking jobs, each breaking at least once in its own family's code: I-BERT ``quant_modules.batch_frexp``
(``np.frexp(inputs.cpu().numpy())``, reached from ``FixedPointMul`` and ``IntLayerNorm``) and ``QuantAct.forward``
(``assert x_max.isnan().sum() == 0 ...``), SeamlessM4T v2 ``SeamlessM4Tv2TextToUnitForConditionalGeneration._hard_upsample``
(``torch.repeat_interleave(hidden_states, durations.view(-1), dim=1)``) and MOSS Transcribe-Diarize
``MossTranscribeDiarizeModel.get_audio_features`` (``audio_embeds[keep_mask]``). MOSS also breaks at the inherited
placeholder check (``inputs_embeds[special_audio_mask].numel()`` in ``get_placeholder_mask``);
``docs/corpus-fourth-scan.md`` lists every site."""

NEAR_COPIES: dict[str, Job] = {}
"""Breaking jobs whose every break is at code copied from a family already used: none here."""

NOT_BREAKING: dict[str, Job] = _pick(
    _ALL, "rwkv_causal_lm_train", "rwkv_causal_lm_eval", "xlstm_causal_lm_train", "xlstm_causal_lm_eval",
    "moonshine_asr_train", "hrm_text_causal_lm_train", "dia_tts_train", "esmc_mlm_train",
)
"""Measured with 0 graph breaks (explain: 1 graph): not in :data:`JOBS`."""

NOT_BUILT: dict[str, str] = {
    "clvp": "read and skipped: its bos/eos padding was rewritten with `torch.where` for compile; no data-dependent "
            "site left in a forward pass",
    "univnet_xcodec": "read and skipped: no data-dependent code in their forward passes (shape checks on Python ints)",
    "nemotron_asr_streaming_omniasr_ctc": "not built: modular from Parakeet (read by an earlier corpus); the RNNT "
                                          "loss is Parakeet's and `blank_mask.all()` is in generation",
    "umt5_mt5_mbart_marian_flaubert": "not built: their data-dependent sites (`unique_consecutive(eos_mask...)`, "
                                      "`isfinite(...).all()`, `lengths.max().item()`) are \"Copied from\" T5, Bart "
                                      "or XLM",
    "bark": "not built: listed by the third corpus (its `.item()` sites are in generation)",
    "kimi_linear_nemotron_h_lara_mini": "not built: MoE (expert routing with `nonzero`)",
    "time_series_tabular": "no family left in transformers 5.25 that an earlier corpus does not use",
}
"""Tried and dropped, built differently, or read and skipped, with the reason."""

MEASURABLE: dict[str, Job] = dict(_ALL)
"""Every job this file defines, the non-breaking ones included."""
