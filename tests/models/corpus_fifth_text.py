"""Fifth held-out jobs outside vision: three speech/music language models with their own audio front ends.

A fifth held-out set for the advisor (scan of 2026-12-05, torch 2.13 / transformers 5.25.0, CPU), from families none
of the earlier corpora touch, chosen only by novelty and by breaking in their own family code (the advisor was not
read or run): Qwen2.5-Omni's thinker with audio input (its own audio encoder chunks the mel features by length with
``chunk_lengths.tolist()``, ``after_conv1.max().item()``, ``nonzero`` and tensor-valued ``repeat_interleave``, and
its own audio attention splits by ``lengths.tolist()``), VibeVoice-ASR (the projected acoustic and semantic latents
selected with the boolean ``padding_mask`` in its own ``get_audio_features``) and MusicFlamingo (rotary time
embedding timestamps built from the audio placeholder runs with ``torch.where(diff == 1)`` and a
``torch_compilable_check`` in its own ``_build_audio_timestamps``). None is MoE. :data:`JOBS` break, each at least
once in its own family's code; :data:`NOT_BREAKING` compile whole (CPM-Ant). Same shape as
:mod:`tests.models.corpus_fourth_text`: a :class:`~tests.models.corpus.Job` builds its model offline from a tiny config
(random weights, nothing downloaded; :meth:`~tests.models.corpus.Job.make` seeds torch, numpy and random with 0 before
``build``) and returns it in its mode with its keyword inputs. Each breaking job was measured with
``python -m tests.models.explain_check_fifth JOB`` (one eager call, then ``torch._dynamo.explain`` of one call, fresh
process, ``OMP_NUM_THREADS=1``) twice, with the same counts both times; the figures and the source line of every break
are in ``docs/corpus-fifth-scan-text.md``. The advisor was not run on any of them while they were chosen.
"""

from __future__ import annotations

from typing import Any

import torch

from tests.models.corpus import Job, _mode, _pick

__all__ = ["JOBS", "MEASURABLE", "NEAR_COPIES", "NOT_BREAKING", "NOT_BUILT"]


def _qwen25_omni_thinker(train: bool):
    def build():
        import transformers as T

        audio = dict(num_mel_bins=8, encoder_layers=1, encoder_attention_heads=2, encoder_ffn_dim=32, d_model=16,
                     max_source_positions=32, n_window=8, output_dim=16)
        vision = dict(depth=1, hidden_size=16, intermediate_size=32, num_heads=2, out_hidden_size=16,
                      fullatt_block_indexes=[0])
        text = dict(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                    num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=128,
                    rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [1, 1, 2]})
        cfg = T.Qwen2_5OmniThinkerConfig(audio_config=audio, vision_config=vision, text_config=text,
                                         audio_token_index=99, image_token_index=98, video_token_index=97,
                                         audio_start_token_id=95, audio_end_token_id=96, user_token_id=94,
                                         vision_start_token_id=93)  # read by get_rope_index, not a field
        model = _mode(T.Qwen2_5OmniThinkerForConditionalGeneration(cfg), train)
        feats_mask = torch.ones(1, 40, dtype=torch.long)
        feats_mask[0, 30:] = 0  # 30 valid mel frames -> 15 after conv -> 7 audio tokens
        ids = torch.randint(3, 90, (1, 14))
        ids[0, 2], ids[0, 10] = 95, 96
        ids[0, 3:10] = 99
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": torch.ones(1, 14, dtype=torch.long),
                                  "input_features": torch.randn(1, 8, 40), "feature_attention_mask": feats_mask}
        if train:
            inputs["labels"] = torch.randint(3, 90, (1, 14))
        return model, inputs

    return build


def _vibevoice_asr(train: bool):
    def build():
        import transformers as T

        codec = dict(hidden_size=8, num_filters=4, downsampling_ratios=[2, 2], depths=[1, 1, 1], ffn_expansion=2)
        text = dict(model_type="qwen2", vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                    num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64)
        cfg = T.VibeVoiceAsrConfig(acoustic_tokenizer_encoder_config=dict(codec),
                                   semantic_tokenizer_encoder_config=dict(codec), text_config=text,
                                   audio_token_id=99, audio_bos_token_id=97, audio_eos_token_id=98,
                                   acoustic_tokenizer_chunk_size=64)
        model = _mode(T.VibeVoiceAsrForConditionalGeneration(cfg), train)
        padding_mask = torch.ones(1, 96, dtype=torch.bool)
        padding_mask[0, 80:] = False  # 80 valid samples, hop 4 -> 20 audio tokens of 24 frames
        ids = torch.randint(3, 90, (1, 26))
        ids[0, 1], ids[0, 22] = 97, 98
        ids[0, 2:22] = 99
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": torch.ones(1, 26, dtype=torch.long),
                                  "input_values": torch.randn(1, 1, 96), "padding_mask": padding_mask}
        if train:
            inputs["labels"] = torch.randint(3, 90, (1, 26))
        return model, inputs

    return build


def _musicflamingo(train: bool):
    def build():
        import transformers as T

        audio = dict(model_type="audioflamingo3_encoder", num_mel_bins=8, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=32, hidden_size=20, max_source_positions=16)
        text = dict(model_type="qwen2", vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                    num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64)
        cfg = T.MusicFlamingoConfig(audio_config=audio, text_config=text, audio_token_id=99, audio_bos_token_id=97,
                                    audio_eos_token_id=98)
        model = _mode(T.MusicFlamingoForConditionalGeneration(cfg), train)
        feats_mask = torch.ones(1, 32, dtype=torch.long)
        feats_mask[0, 24:] = 0  # 24 valid mel frames -> 12 after conv -> 6 audio tokens (of 8 encoder frames)
        ids = torch.randint(3, 90, (1, 12))
        ids[0, 1], ids[0, 8] = 97, 98
        ids[0, 2:8] = 99
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": torch.ones(1, 12, dtype=torch.long),
                                  "input_features": torch.randn(1, 8, 32), "input_features_mask": feats_mask}
        if train:
            inputs["labels"] = torch.randint(3, 90, (1, 12))
        return model, inputs

    return build


def _cpmant(train: bool):
    def build():
        import transformers as T

        cfg = T.CpmAntConfig(vocab_size=100, hidden_size=16, num_attention_heads=2, dim_head=8, dim_ff=32,
                             num_hidden_layers=1, position_bias_num_buckets=32, position_bias_max_distance=64,
                             prompt_types=4, prompt_length=2, segment_types=4, use_cache=False)
        model = _mode(T.CpmAntForCausalLM(cfg), train)
        ids = torch.randint(3, 100, (1, 10))
        inputs: dict[str, Any] = {"input_ids": ids}
        if train:
            inputs["labels"] = ids.clone()
        return model, inputs

    return build


_ALL: dict[str, Job] = {j.name: j for j in (
    Job("qwen2_5_omni_thinker_audio_train", _qwen25_omni_thinker(True)),
    Job("qwen2_5_omni_thinker_audio_eval", _qwen25_omni_thinker(False)),
    Job("vibevoice_asr_train", _vibevoice_asr(True)),
    Job("vibevoice_asr_eval", _vibevoice_asr(False)),
    Job("musicflamingo_train", _musicflamingo(True)),
    Job("musicflamingo_eval", _musicflamingo(False)),
    Job("cpmant_causal_lm_train", _cpmant(True)),
)}

JOBS: dict[str, Job] = _pick(
    _ALL, "qwen2_5_omni_thinker_audio_train", "qwen2_5_omni_thinker_audio_eval", "vibevoice_asr_train",
    "vibevoice_asr_eval", "musicflamingo_train", "musicflamingo_eval",
)
"""The breaking jobs, each breaking at least once in its own family's code: Qwen2.5-Omni
``Qwen2_5OmniThinkerModel.get_audio_features`` (``input_features.permute(0, 2, 1)[feature_attention_mask.bool()]``),
the module-level audio helpers ``chunk_and_pad_features`` (``chunk_num.sum()``, ``chunk_lengths.tolist()``),
``get_valid_indices`` (``after_conv1.max().item()``, ``nonzero``) and ``get_pool_indices`` (tensor-valued
``repeat_interleave``, ``torch.arange(num_pooled.sum())``), and ``Qwen2_5OmniAudioAttention.forward``
(``torch.split(..., lengths.tolist())``); VibeVoice-ASR ``VibeVoiceAsrModel.get_audio_features``
(``combined_features[padding_mask]``); MusicFlamingo ``MusicFlamingoModel._build_audio_timestamps``
(``torch.where(diff == 1)``, ``torch.where(diff == -1)``, ``torch_compilable_check``) and
``MusicFlamingoModel.get_audio_features`` (``audio_embeds[valid_mask]``, as in AudioFlamingo3, unused). MusicFlamingo also breaks at the placeholder
check inherited from AudioFlamingo3 (``inputs_embeds[special_audio_mask].numel()``); ``docs/corpus-fifth-scan-text.md``
lists every site."""

NEAR_COPIES: dict[str, Job] = {}
"""Breaking jobs whose every break is at code copied from a family already used: none built here (see
:data:`NOT_BUILT` for the families read and set aside as copies)."""

NOT_BREAKING: dict[str, Job] = _pick(_ALL, "cpmant_causal_lm_train")
"""Measured with 0 graph breaks (explain: 1 graph): not in :data:`JOBS`."""

NOT_BUILT: dict[str, str] = {
    "granite_speech_plus": "read and skipped: modular from Granite Speech (used by the third corpus); its one "
                           "data-dependent site, `audio_features[input_features_mask]`, is Granite Speech's "
                           "`get_audio_features`, and its own `GraniteSpeechPlusCTCEncoder.forward` is static",
    "wav2vec2_conformer_data2vec_audio": "not built: modular from wav2vec2 (used); their `_compute_mask_indices`, "
                                         "feature encoder and CTC head are wav2vec2's",
    "fun_asr_nano_glmasr_voxtral_nemotron3_5_transcribe": "read and skipped: their only data-dependent sites are "
                                                          "the AudioFlamingo3/Llava-style placeholder check "
                                                          "(`inputs_embeds[special_audio_mask].numel()`) and "
                                                          "`masked_scatter`",
    "nemotron3_5_asr": "read and skipped: `blank_mask.all()` runs only in decoding; the rest is Parakeet-style "
                       "(Parakeet is used)",
    "pop2piano": "read and skipped: its `torch.isinf(hidden_states).any()` clamps are \"Copied from\" T5",
    "gemma3n": "read and skipped, for time: its audio and text code is written with `torch.where` (no "
               "data-dependent site found in a forward pass) and a tiny build needs vision, audio and text configs",
    "text_encoders_lms": "scanned (grep of the modeling files) and skipped: ConvBERT, Nystromformer, YOSO, SqueezeBERT, MobileBERT, RemBERT, "
                         "RoCBert, ELECTRA, Megatron-BERT, Pegasus-X, CTRL, XGLM, BioGPT, M2M100, Blenderbot, "
                         "EuroBERT, ModernBERT, Nomic BERT, Jina Embeddings v3 have no data-dependent code in a "
                         "forward pass (or only \"Copied from\" BERT/Bart code); CPM-Ant was measured instead",
    "moe_families": "not built: MoE (expert routing with `nonzero`): OpenAI privacy filter, Flint, Inkling, "
                    "Kolibri, Zaya, Beam, AXK1, Doge, Ergo, Diffusion Gemma",
    "time_series_tabular_protein": "no unused time-series, tabular or protein family left in transformers 5.25",
}
"""Tried and dropped, built differently, or read and skipped, with the reason."""

MEASURABLE: dict[str, Job] = dict(_ALL)
"""Every job this file defines, the non-breaking ones included."""
