"""Sixth held-out jobs outside vision: audio-text and text families none of the earlier corpora touch.

A sixth held-out set for the advisor (scan of 2026-12-05, torch 2.13 / transformers 5.25.0, CPU), chosen only by
novelty (families absent from every earlier corpus and scan) and by breaking in their own family code (the advisor
was not read or run): Apertus 1.5 with audio input (its own ``get_audio_tokens`` validates the waveform padding mask
with ``if (audio_lengths == 0).any()`` and ``if (padding_mask.long().diff(dim=-1) > 0).any()`` before tokenizing each
clip at its own length with the WavTokenizer encoder), the Gemma 4 assistant drafter with ordered embeddings (its own
``Gemma4AssistantMaskedEmbedder`` fills the unselected logits with ``selected_logits.min().item() - 1.0``), Nemotron-H
Omni with audio input (its own ``get_audio_features`` keeps each clip's subsampled frames with a boolean mask,
``audio_embeds[positions[None, :] < lengths[:, None]]``) and Voxtral Realtime called without ``num_delay_tokens``
(its own ``VoxtralRealtimeModel.forward`` warns with ``logger.warning_once``). None is MoE (Nemotron-H Omni's language
model is built with attention and MLP blocks only). :data:`JOBS` break, each at least once in its own family's code;
:data:`NOT_BREAKING` compile whole (Nemotron 3 diarization). Same shape as :mod:`tests.models.corpus_fifth_text`: a
:class:`~tests.models.corpus.Job` builds its model offline from a tiny config (random weights, nothing downloaded;
:meth:`~tests.models.corpus.Job.make` seeds torch, numpy and random with 0 before ``build``) and returns it in its mode
with its keyword inputs. Each job was measured with ``python -m tests.models.explain_check_sixth JOB`` (one eager call,
then ``torch._dynamo.explain`` of one call, fresh process, ``OMP_NUM_THREADS=1``) twice, with the same counts both
times; the figures and the source line of every break are in ``docs/corpus-sixth-scan.md``. The advisor was not
run on any of them while they were chosen.
"""

from __future__ import annotations

from typing import Any

import torch

from tests.models.corpus import Job, _mode, _pick

__all__ = ["JOBS", "MEASURABLE", "NEAR_COPIES", "NOT_BREAKING", "NOT_BUILT"]


def _apertus1p5_audio(train: bool):
    def build():
        import transformers as T

        text = dict(vocab_size=200, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                    num_key_value_heads=1, max_position_embeddings=64,
                    rope_parameters={"rope_type": "default", "rope_theta": 10000.0})
        vision = dict(codebook_size=40, embed_dim=8, latent_channels=8, base_channels=32, channel_multiplier=[1],
                      num_res_blocks=1, attn_resolutions=[], resolution=16)
        audio = dict(model_type="wavtokenizer_encoder", num_filters=4, upsampling_ratios=[2, 2], num_lstm_layers=1,
                     hidden_size=16, codebook_size=32, codebook_dim=16, kernel_size=3, last_kernel_size=3)
        cfg = T.Apertus1p5Config(text_config=text, vision_config=vision, audio_config=audio, image_token_id=90,
                                 audio_token_id=91, image_token_offset=100, audio_token_offset=140)
        model = _mode(T.Apertus1p5ForConditionalGeneration(cfg), train)
        padding_mask = torch.ones(1, 48, dtype=torch.long)
        padding_mask[0, 40:] = 0  # one clip of 40 valid samples, hop 4 -> 10 audio tokens
        ids = torch.randint(3, 90, (1, 16))
        ids[0, 2:12] = 91
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": torch.ones(1, 16, dtype=torch.long),
                                  "input_values": torch.randn(1, 1, 48), "padding_mask": padding_mask}
        if train:
            inputs["labels"] = torch.randint(3, 90, (1, 16))
        return model, inputs

    return build


def _gemma4_assistant():
    def build():
        import transformers as T

        text = dict(model_type="gemma4_text", vocab_size=64, hidden_size=16, intermediate_size=32,
                    num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, head_dim=8,
                    global_head_dim=8, layer_types=["sliding_attention", "full_attention"], sliding_window=8,
                    hidden_size_per_layer_input=0, vocab_size_per_layer_input=0, max_position_embeddings=64)
        cfg = T.Gemma4AssistantConfig(text_config=text, backbone_hidden_size=16, use_ordered_embeddings=True,
                                      num_centroids=4, centroid_intermediate_top_k=2)
        model = T.Gemma4AssistantForCausalLM(cfg).eval()
        with torch.no_grad():
            model.masked_embedding.token_ordering.copy_(torch.randperm(64))
        kv_len = 10  # the target model's cache: 10 tokens, the last 8 of them in its sliding window
        shared = {"full_attention": (torch.randn(1, 1, kv_len, 8), torch.randn(1, 1, kv_len, 8)),
                  "sliding_attention": (torch.randn(1, 1, 8, 8), torch.randn(1, 1, 8, 8))}
        inputs: dict[str, Any] = {"inputs_embeds": torch.randn(1, 1, 32), "position_ids": torch.tensor([[kv_len]]),
                                  "attention_mask": torch.ones(1, kv_len, dtype=torch.long),
                                  "shared_kv_states": shared}
        return model, inputs

    return build


def _nemotron_h_omni_audio(train: bool):
    def build():
        import transformers as T

        text = dict(model_type="nemotron_h", vocab_size=100, hidden_size=16, layers_block_type=["full_attention", "mlp"],
                    num_attention_heads=2, num_key_value_heads=1, head_dim=8, intermediate_size=32,
                    max_position_embeddings=64, use_mamba_kernels=False)
        vision = dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, patch_size=4, image_size=16,
                      max_img_size=32, num_cls_tokens=1, num_registers=0, video_temporal_patch_size=2)
        audio = dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                     subsampling_factor=4, subsampling_conv_channels=8, num_mel_bins=8, dropout=0.0, layerdrop=0.0,
                     activation_dropout=0.0, attention_dropout=0.0, max_position_embeddings=64,
                     projection_hidden_size=16, projection_bias=False)
        cfg = T.NemotronH_Omni_Reasoning_V3_Config(text_config=text, vision_config=vision, audio_config=audio,
                                                   vision_hidden_size=16, projector_hidden_size=16,
                                                   image_token_id=98, video_token_id=97, audio_token_id=99)
        model = _mode(T.NemotronH_Omni_Reasoning_V3(cfg), train)
        feats_mask = torch.ones(1, 40, dtype=torch.long)
        feats_mask[0, 28:] = 0  # 28 valid mel frames of 40
        model.eval()
        with torch.no_grad():
            n_audio = int(model.audio_tower._get_subsampling_output_length(feats_mask.sum(-1) + 1)[0])
        _mode(model, train)
        ids = torch.randint(3, 90, (1, n_audio + 6))
        ids[0, 2:2 + n_audio] = 99
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": torch.ones_like(ids),
                                  "input_features": torch.randn(1, 40, 8), "input_features_mask": feats_mask}
        if train:
            inputs["labels"] = torch.randint(3, 90, ids.shape)
        return model, inputs

    return build


def _voxtral_realtime(train: bool):
    def build():
        import transformers as T

        audio = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, head_dim=8,
                     num_mel_bins=8, max_position_embeddings=64, sliding_window=16)
        text = dict(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                    num_key_value_heads=1, head_dim=8, max_position_embeddings=64, sliding_window=16)
        cfg = T.VoxtralRealtimeConfig(audio_config=audio, text_config=text, downsample_factor=4)
        model = _mode(T.VoxtralRealtimeForConditionalGeneration(cfg), train)
        ids = torch.randint(3, 100, (1, 8))  # 64 mel frames -> 32 encoder frames -> 8 audio embeddings
        inputs: dict[str, Any] = {"input_ids": ids, "input_features": torch.randn(1, 8, 64), "use_cache": False}
        if train:
            inputs["labels"] = torch.randint(3, 100, (1, 8))
        return model, inputs

    return build


def _nemotron3_diarization():
    def build():
        import transformers as T

        audio = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                     num_mel_bins=8, subsampling_factor=4, max_position_embeddings=64)
        head = dict(hidden_size=16, num_speakers=4, audio_hidden_size=16, subsampling_factor=4)
        streaming = dict(fifo_length=4, speaker_cache_update_period=3, speaker_cache_length=8, num_speakers=4,
                         subsampling_factor=4)
        cfg = T.Nemotron3DiarizationConfig(audio_config=audio, head_config=head, streaming_config=streaming,
                                           chunk_length=4, chunk_right_context=1, chunk_left_context=1,
                                           fifo_length=4, speaker_cache_update_period=3)
        model = T.Nemotron3DiarizationForAudioFrameClassification(cfg).eval()
        inputs: dict[str, Any] = {"input_features": torch.randn(1, 96, 8)}  # 24 encoder frames, 6 chunks
        return model, inputs

    return build


_ALL: dict[str, Job] = {j.name: j for j in (
    Job("apertus1p5_audio_train", _apertus1p5_audio(True)),
    Job("apertus1p5_audio_eval", _apertus1p5_audio(False)),
    Job("gemma4_assistant_eval", _gemma4_assistant()),
    Job("nemotron_h_omni_audio_train", _nemotron_h_omni_audio(True)),
    Job("nemotron_h_omni_audio_eval", _nemotron_h_omni_audio(False)),
    Job("voxtral_realtime_train", _voxtral_realtime(True)),
    Job("voxtral_realtime_eval", _voxtral_realtime(False)),
    Job("nemotron3_diarization_eval", _nemotron3_diarization()),
)}

JOBS: dict[str, Job] = _pick(
    _ALL, "apertus1p5_audio_train", "apertus1p5_audio_eval", "gemma4_assistant_eval", "nemotron_h_omni_audio_train",
    "nemotron_h_omni_audio_eval", "voxtral_realtime_train", "voxtral_realtime_eval",
)
"""The breaking jobs, each breaking at least once in its own family's code: Apertus 1.5
``Apertus1p5Model.get_audio_tokens`` (``if (audio_lengths == 0).any()``,
``if (padding_mask.long().diff(dim=-1) > 0).any()``) and the ``torch_compilable_check`` of its own
``get_placeholder_mask``, besides the reflect-padding branch of its WavTokenizer encoder (``if length <= max_pad`` in
the Encodec-derived ``WavTokenizerConv1d._pad1d``); Gemma 4 assistant ``Gemma4AssistantMaskedEmbedder.forward``
(``selected_logits.min().item()``); Nemotron-H Omni ``get_audio_features`` (boolean-mask indexing of the audio
embeddings) and the ``torch_compilable_check`` of its own ``get_placeholder_mask``, plus the causal-LM loss call in
train; Voxtral Realtime ``VoxtralRealtimeModel.forward`` (``logger.warning_once`` when ``num_delay_tokens`` is not
given). ``docs/corpus-sixth-scan.md`` lists every site."""

NEAR_COPIES: dict[str, Job] = {}
"""Breaking jobs whose every break is at code copied from a family already used: none built here (see
:data:`NOT_BUILT` for the families read and set aside as copies)."""

NOT_BREAKING: dict[str, Job] = _pick(_ALL, "nemotron3_diarization_eval")
"""Measured with 0 graph breaks (explain: 1 graph): not in :data:`JOBS`."""

NOT_BUILT: dict[str, str] = {
    "gemma4_unified_assistant": "read and skipped: its masked embedder repeats Gemma 4 assistant's "
                                "`selected_logits.min().item()` (a near copy of a family built here)",
    "pocket_tts_audio_tokenizer": "read and skipped: modular from Mimi (used); its one data-dependent site, "
                                  "`torch.arange(encoded_lengths.max())` in `get_audio_codes_mask`, is Mimi's",
    "wavtokenizer": "not built alone: modular from Encodec (used); its `_pad1d` reflect branch is Encodec's (it "
                    "shows up inside the Apertus 1.5 jobs)",
    "bamba_falcon_h1_olmo_hybrid": "read and skipped: their SSM / linear-attention mixers are modular from Mamba2 "
                                   "and Qwen3-Next (both used)",
    "xcodec2_neucodec": "read and skipped: DAC/Qwen2.5-Omni-derived codecs written for compile (static padding masks, "
                        "`torch.polar` ISTFT), no data-dependent site found in a forward pass",
    "canary_cohere_asr_granite_speech5_moonshine_streaming": "read and skipped: no data-dependent site in a forward "
                                                             "pass (Cohere ASR's `int(...)` length helper and Granite "
                                                             "Speech 5's `output_lengths.max()` are not called by "
                                                             "forward)",
    "embedding_gemma2": "read and skipped: its only data-dependent sites are the Gemma-style placeholder checks "
                        "(`inputs_embeds[audio_mask].numel()`) and image/video splits by `.tolist()` (vision)",
    "text_lms": "scanned (grep of the modeling files) and skipped: GPT-2, GPT-Neo, GPT-NeoX, GPT-J, CodeGen, Falcon, "
                "StableLM, StarCoder2, Gemma 2, VaultGemma, Helium, BitNet, DiffLlama, CWM, Jais2, "
                "MiniCPM3, Nanochat, Seed-OSS, SmolLM3, OLMo 3, ModernBERT decoder, Ultrabert, Dory, Youtu, T5Gemma, "
                "MPNet, DistilBERT, XLM-R XL, LiLT, MarkupLM have no data-dependent code in a forward pass; Falcon-Mamba "
                "is modular from Mamba (used)",
    "moe_families": "not built: MoE (expert routing with `nonzero`): AXK2, Bailing hybrid, Dots3 note, GLM5 next, "
                    "HY v3, Laguna, Mellum, Muse Spark, Qwen4 exp, Solar Open, Step3p7, Sarvam MLA",
}
"""Tried and dropped, built differently, or read and skipped, with the reason."""

MEASURABLE: dict[str, Job] = dict(_ALL)
"""Every job this file defines, the non-breaking ones included."""
