"""Third held-out transformers jobs outside vision: byte-level text, audio LMs, speech recognition, protein-text.

A third held-out set for the advisor (scan of 2026-12-05, torch 2.13 / transformers 5.25.0, CPU), from families none
of the earlier corpora touch: the Byte Latent Transformer (BLT, whose entropy patcher selects patch starts with a
boolean mask and sizes patches with ``.item()``), Qwen2-Audio (audio features selected by a length mask, a token
count read with ``.item()``), Evolla (a protein-text model whose sequence aligner branches in Python on
``kv_attn_mask.any()``), Moshi's depth decoder (a loop over a tensor of codebook indices, each read with
``.item()``), Qwen3-ASR (valid post-CNN audio positions gathered with ``nonzero``) and Granite Speech (projected
audio features selected by ``input_features_mask``). None is MoE. :data:`JOBS` break, each at least once in its own
family's code; :data:`NEAR_COPIES` break only at code generated from a family already used; :data:`NOT_BREAKING`
compile whole. Same shape as :mod:`tests.models.corpus_heldout_text`: a :class:`~tests.models.corpus.Job` builds its
model offline from a tiny config (random weights, nothing downloaded; :meth:`~tests.models.corpus.Job.make` seeds
torch, numpy and random with 0 before ``build``) and returns it in its mode with its keyword inputs. Each job was
measured with ``python -m tests.models.explain_check_third JOB`` (one eager call, then ``torch._dynamo.explain`` of one
call, fresh process, ``OMP_NUM_THREADS=1``) twice, with the same counts both times; the figures and the source line
of every break are in ``docs/_third_text.md`` (for ``docs/corpus-third-scan.md``). The advisor was not run on any of
them while they were chosen.
"""

from __future__ import annotations

from typing import Any

import torch

from tests.models.corpus import Job, _mode, _pick

__all__ = ["JOBS", "MEASURABLE", "NEAR_COPIES", "NOT_BREAKING", "NOT_BUILT"]


def _blt(train: bool):
    def build():
        import transformers as T

        sub = dict(hidden_size=16, num_attention_heads=2, num_key_value_heads=2, intermediate_size=32,
                   max_position_embeddings=64)
        cfg = T.BltConfig(vocab_size=260, max_position_embeddings=64, patch_size=4, patching_threshold=1.335,
                          max_patch_length=None, local_attention_window_len=None, cross_attn_k=2,
                          encoder_hash_byte_group_size=[3, 4], encoder_hash_byte_group_vocab=50,
                          patcher_config=dict(vocab_size=260, num_hidden_layers=1, **sub),
                          encoder_config=dict(vocab_size=260, num_hidden_layers=1, hidden_size_global=32, **sub),
                          decoder_config=dict(vocab_size=260, num_hidden_layers=1, hidden_size_global=32, **sub),
                          global_config=dict(num_hidden_layers=1, **{**sub, "hidden_size": 32}),
                          use_cache=False)
        model = _mode(T.BltForCausalLM(cfg), train)
        ids = torch.randint(4, 260, (1, 12))
        inputs: dict[str, Any] = {"input_ids": ids}
        if train:
            inputs["labels"] = ids.clone()
        return model, inputs

    return build


def _qwen2_audio(train: bool):
    def build():
        import transformers as T

        audio = dict(num_mel_bins=8, encoder_layers=1, encoder_attention_heads=2, encoder_ffn_dim=32, d_model=16,
                     max_source_positions=16, encoder_layerdrop=0.0)
        text = dict(model_type="qwen2", vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                    num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64)
        cfg = T.Qwen2AudioConfig(audio_config=audio, text_config=text, audio_token_index=99)
        model = _mode(T.Qwen2AudioForConditionalGeneration(cfg), train)
        ids = torch.randint(3, 90, (1, 14))
        ids[0, 3:11] = 99  # 32 mel frames -> 8 audio tokens, already expanded
        inputs: dict[str, Any] = {"input_ids": ids, "input_features": torch.randn(1, 8, 32),
                                  "feature_attention_mask": torch.ones(1, 32, dtype=torch.long),
                                  "attention_mask": torch.ones(1, 14, dtype=torch.long)}
        if train:
            inputs["labels"] = torch.randint(3, 90, (1, 14))
        return model, inputs

    return build


def _evolla(train: bool):
    def build():
        import transformers as T

        prot = dict(vocab_size=40, mask_token_id=4, pad_token_id=1, hidden_size=16, num_hidden_layers=1,
                    num_attention_heads=2, intermediate_size=32, max_position_embeddings=64, token_dropout=False)
        cfg = T.EvollaConfig(protein_encoder_config=prot, vocab_size=100, hidden_size=16, intermediate_size=32,
                             num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
                             max_position_embeddings=64, aligner_num_add_layers=1, aligner_ffn_mult=2,
                             resampler_depth=1, resampler_dim_head=8, resampler_heads=2, resampler_num_latents=4,
                             resampler_ff_mult=2, pad_token_id=0, bos_token_id=1, eos_token_id=2)
        model = _mode(T.EvollaForProteinText2Text(cfg), train)
        prot_ids = torch.randint(5, 40, (1, 10))
        prot_ids[0, 0] = 0  # <cls>
        ids = torch.randint(3, 100, (1, 8))
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": torch.ones(1, 8, dtype=torch.long),
                                  "protein_input_ids": prot_ids,
                                  "protein_attention_mask": torch.ones(1, 10, dtype=torch.long)}
        if train:
            inputs["labels"] = ids.clone()
        return model, inputs

    return build


def _moshi_depth(train: bool):
    def build():
        import transformers as T

        cfg = T.MoshiDepthConfig(vocab_size=50, hidden_size=16, input_size=24, num_hidden_layers=1,
                                 num_attention_heads=2, num_key_value_heads=2, audio_vocab_size=20,
                                 max_position_embeddings=4, sliding_window=4, ffn_dim=32, num_codebooks=4,
                                 use_cache=False)
        from transformers.models.moshi.modeling_moshi import MoshiDepthDecoder

        model = _mode(MoshiDepthDecoder(cfg), train)
        ids = torch.cat([torch.randint(0, 50, (2, 1)), torch.randint(0, 20, (2, 3))], dim=1)  # text + 3 codebooks
        inputs: dict[str, Any] = {"input_ids": ids, "last_hidden_state": torch.randn(2, 4, 24)}
        if train:
            inputs["labels"] = torch.randint(0, 20, (2, 4))
        return model, inputs

    return build


def _qwen3_asr(train: bool):
    def build():
        import transformers as T

        audio = dict(num_mel_bins=8, encoder_layers=1, encoder_attention_heads=2, encoder_ffn_dim=32, d_model=16,
                     max_position_embeddings=16, n_window=50, n_window_infer=800, downsample_hidden_size=4,
                     output_dim=16)
        text = dict(model_type="qwen3", vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                    num_attention_heads=2, num_key_value_heads=1, head_dim=8, max_position_embeddings=64)
        cfg = T.Qwen3ASRConfig(audio_config=audio, text_config=text, audio_token_id=99, timestamp_token_id=98,
                               pad_token_id=0, eos_token_id=2)
        model = _mode(T.Qwen3ASRForConditionalGeneration(cfg), train)
        mask = torch.ones(1, 200, dtype=torch.long)
        mask[0, 150:] = 0  # 2 chunks of 100 mel frames, 150 valid -> 13 + 7 audio tokens
        ids = torch.randint(3, 90, (1, 26))
        ids[0, 2:22] = 99
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": torch.ones(1, 26, dtype=torch.long),
                                  "input_features": torch.randn(1, 8, 200), "input_features_mask": mask}
        if train:
            inputs["labels"] = torch.randint(3, 90, (1, 26))
        return model, inputs

    return build


def _granite_speech(train: bool):
    def build():
        import transformers as T

        enc = dict(input_dim=8, num_layers=2, hidden_dim=16, feedforward_mult=2, num_heads=2, dim_head=8,
                   output_dim=6, context_size=8, max_pos_emb=16, dropout=0.0, conv_kernel_size=3)
        proj = dict(model_type="blip_2_qformer", hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=32, encoder_hidden_size=16, cross_attention_frequency=1,
                    max_position_embeddings=32)
        text = dict(model_type="granite", vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                    num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64)
        cfg = T.GraniteSpeechConfig(text_config=text, encoder_config=enc, projector_config=proj,
                                    audio_token_index=99, has_lora_adapter=False, downsample_rate=3, window_size=6)
        model = _mode(T.GraniteSpeechForConditionalGeneration(cfg), train)
        feats_mask = torch.ones(1, 10, dtype=torch.bool)
        feats_mask[0, 8:] = False  # 30 frames -> 5 windows x 2 queries = 10 projected features, 8 kept
        ids = torch.randint(3, 90, (1, 12))
        ids[0, 2:10] = 99
        inputs: dict[str, Any] = {"input_ids": ids, "input_features": torch.randn(1, 30, 8),
                                  "input_features_mask": feats_mask,
                                  "attention_mask": torch.ones(1, 12, dtype=torch.long)}
        if train:
            inputs["labels"] = torch.randint(3, 90, (1, 12))
        return model, inputs

    return build


def _roformer_mlm():
    import transformers as T

    cfg = T.RoFormerConfig(vocab_size=100, embedding_size=16, hidden_size=16, num_hidden_layers=1,
                           num_attention_heads=2, intermediate_size=32, max_position_embeddings=32, pad_token_id=0)
    ids = torch.randint(1, 100, (1, 8))
    return T.RoFormerForMaskedLM(cfg).train(), {"input_ids": ids, "labels": ids.clone()}


def _unispeech_sat_ctc():
    import transformers as T

    cfg = T.UniSpeechSatConfig(vocab_size=20, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                               intermediate_size=32, conv_dim=(8, 8), conv_stride=(4, 4), conv_kernel=(8, 4),
                               num_conv_pos_embeddings=4, num_conv_pos_embedding_groups=2, mask_time_prob=0.5,
                               mask_time_length=2, layerdrop=0.0, pad_token_id=0, do_stable_layer_norm=False)
    return T.UniSpeechSatForCTC(cfg).train(), {"input_values": torch.randn(1, 800),
                                               "labels": torch.randint(1, 20, (1, 5))}


_ALL: dict[str, Job] = {j.name: j for j in (
    Job("blt_causal_lm_train", _blt(True)),
    Job("blt_causal_lm_eval", _blt(False)),
    Job("qwen2_audio_train", _qwen2_audio(True)),
    Job("qwen2_audio_eval", _qwen2_audio(False)),
    Job("evolla_protein_text_train", _evolla(True)),
    Job("evolla_protein_text_eval", _evolla(False)),
    Job("moshi_depth_train", _moshi_depth(True)),
    Job("moshi_depth_eval", _moshi_depth(False)),
    Job("qwen3_asr_train", _qwen3_asr(True)),
    Job("qwen3_asr_eval", _qwen3_asr(False)),
    Job("granite_speech_train", _granite_speech(True)),
    Job("granite_speech_eval", _granite_speech(False)),
    Job("roformer_mlm_train", _roformer_mlm),
    Job("unispeech_sat_ctc_train", _unispeech_sat_ctc),
)}

JOBS: dict[str, Job] = _pick(
    _ALL, "blt_causal_lm_train", "blt_causal_lm_eval", "qwen2_audio_train", "qwen2_audio_eval",
    "evolla_protein_text_train", "evolla_protein_text_eval", "moshi_depth_train", "moshi_depth_eval",
    "qwen3_asr_train", "qwen3_asr_eval", "granite_speech_train", "granite_speech_eval",
)
"""The breaking jobs, each breaking at least once in its own family's code: BLT ``BltPatcher.patch_lengths_from_entropies``
(``padded_indices[padded_mask]``, then slicing by the 0-d ``max_valid_patches``), Qwen2-Audio ``Qwen2AudioModel.forward``
(``audio_features[audio_features_mask]``, ``.sum().item()``), Evolla ``EvollaSequenceAlignerCrossAttention.forward``
(``if ... protein_kv_attn_mask.any()``), Moshi ``MoshiDepthDecoder.forward`` (``position_idx.item()`` over
``codebook_idx``), Qwen3-ASR ``Qwen3ASREncoder.forward`` (``valid_mask.flatten().nonzero()``) and Granite Speech
``GraniteSpeechModel.get_merged_audio_embeddings`` (``audio_features[input_features_mask]``). Some also break at
shared or inherited code: the output-capturing wrapper, the placeholder ``torch_compilable_check``, the
``shift_attention_mask`` loss (Qwen2-Audio, Granite Speech), Qwen3-Omni's ``get_audio_cu_seqlens`` ``.item()`` and the
Qwen2-VL-style ``lengths.tolist()`` split (Qwen3-ASR); ``docs/_third_text.md`` lists every site."""

NEAR_COPIES: dict[str, Job] = _pick(_ALL, "unispeech_sat_ctc_train")
"""Breaking jobs whose every break is at code copied from a family already used: UniSpeech-SAT's modeling file is
generated from a modular file built on wav2vec2; its breaks are wav2vec2's (``_compute_mask_indices``' numpy
``.item()``/``tolist``, the feature encoder's ``requires_grad = True``, the CTC head's ``labels.max()`` check) plus the
shared CTC loss."""

NOT_BREAKING: dict[str, Job] = _pick(_ALL, "roformer_mlm_train")
"""Measured with 0 graph breaks (explain: 1 graph): not in :data:`JOBS`."""

NOT_BUILT: dict[str, str] = {
    "qwen3_asr_small_window": "Qwen3-ASR with `n_window=4`: `_get_feat_extract_output_lengths` hard-codes 13 "
                              "tokens per full 100-frame chunk, so split sizes did not sum (RuntimeError); the "
                              "jobs keep `n_window=50` and use 8 mel bins",
    "gradium_phonon_tts": "not built: its mask-selected latents and `latent_stats_num_updates.item()` EMA mirror "
                          "Pocket TTS (already used)",
    "sew_d": "not built: its `_compute_mask_indices` and conv feature layers are \"Copied from\" wav2vec2 and its "
             "positional conv from SEW (both used); its DeBERTa-style attention was not read",
    "vibevoice": "not built for time: `acoustic_features[padding_mask]` in `get_audio_features` is its own, but a "
                 "tiny build needs the acoustic tokenizer, a semantic model and a diffusion head config",
    "esmfold2": "not built for time: many own `nonzero`/`unique`/`.item()` sites, but a folding input needs atom "
                "features",
    "bark_kyutai_speech_to_text": "not built: their `.item()` sites are in generation (`BarkCoarseModel.generate`, "
                                  "Kyutai's `_prepare_model_inputs`), not in a forward pass",
    "time_series_graph_tabular_rl": "no family left in transformers 5.25 that is not already used "
                                       "(autoformer, informer, patchtst, patchtsmixer, time_series_transformer, "
                                       "timesfm, timesfm2_5, decision_transformer; graphormer, trajectory_transformer "
                                       "are gone)",
}
"""Tried and dropped, built differently, or read and skipped, with the reason."""

MEASURABLE: dict[str, Job] = dict(_ALL)
"""Every job this file defines, the non-breaking ones included."""
