"""Held-out transformers jobs in text, audio/speech, music, time series and RL: breaks in each family's own code.

A second held-out set for the advisor, from families none of the earlier corpora (``corpus.py``, ``corpus19.py``,
``corpus27.py``, ``corpus_fresh.py``, the MoE and speech files) touch: language-adapter encoders (X-MOD, whose
per-language adapters select tokens with a boolean mask), FAIR's WMT19 translation model (FSMT, a Python branch on
``padding_mask.any()``), music generation (MusicGen's decoder, a layer drop drawn with Python's ``random``),
DeBERTa v1 (its attention span is a 0-d tensor used as a slice bound, where DeBERTa-v2's is an int), document
key-information extraction (BROS' SPADE head, whose loss selects the first token of every box with a mask),
dual-FFN audio language models (Higgs Audio v2, which routes audio and text tokens through separate layer norms and
MLPs by mask indexing) and text-to-speech with a flow head (Pocket TTS: mask-selected latents, an EMA of the
latent statistics guarded by ``.item()``). None is MoE. :data:`JOBS` break, each at least once in its own family's
code; :data:`NEAR_COPIES` break too, but only at code copied (or mirrored without a marker) from a family the project
already used or at generic patterns and shared helpers, so they are kept out of :data:`JOBS`; :data:`NOT_BREAKING`
compile whole. Same shape as :mod:`tests.models.corpus_fresh`: a :class:`~tests.models.corpus.Job` builds its model
offline from a tiny config (random weights, nothing downloaded; :meth:`~tests.models.corpus.Job.make` seeds torch,
numpy and random with 0 before ``build``, so the weights and the inputs drawn in ``build`` are the same on every run)
and returns it in its mode with its keyword inputs. Each job was measured with ``torch._dynamo.explain`` of one call
after one eager call, in a fresh process (``python -m tests.models.explain_check_heldout JOB``), twice, with the
same counts both times, on torch 2.13 / transformers 5.25.0 (CPU, ``OMP_NUM_THREADS=1``); the figures and the source
line of every break are in ``docs/corpus-heldout-scan.md``. The advisor was run on them once, after (``docs/corpus.md``).
"""

from __future__ import annotations

from typing import Any

import torch

from tests.models.corpus import Job, _ids, _mode, _pick

__all__ = ["JOBS", "MEASURABLE", "NEAR_COPIES", "NOT_BREAKING", "NOT_BUILT"]


def _xmod(train: bool):
    def build():
        import transformers as T

        cfg = T.XmodConfig(vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                           intermediate_size=32, max_position_embeddings=40, pad_token_id=1,
                           languages=["en_XX", "de_DE", "fr_XX"], adapter_reduction_factor=2)
        model = _mode(T.XmodForMaskedLM(cfg), train)
        inputs: dict[str, Any] = {"input_ids": torch.randint(3, 100, (3, 8)), "lang_ids": torch.tensor([0, 2, 0])}
        if train:
            inputs["labels"] = torch.randint(3, 100, (3, 8))
        return model, inputs

    return build


def _fsmt(train: bool):
    def build():
        import transformers as T

        cfg = T.FSMTConfig(langs=["en", "de"], src_vocab_size=100, tgt_vocab_size=100, d_model=16, encoder_layers=1,
                           decoder_layers=1, encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
                           decoder_ffn_dim=32, max_position_embeddings=32, pad_token_id=1, eos_token_id=2,
                           bos_token_id=0, decoder_start_token_id=2, encoder_layerdrop=0.0, decoder_layerdrop=0.0)
        model = _mode(T.FSMTForConditionalGeneration(cfg), train)
        ids = torch.randint(3, 100, (2, 8))
        ids[:, -1] = 2
        ids[1, -3:] = 1  # padded second sentence
        ids[1, -4] = 2
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": (ids != 1).long()}
        labels = torch.randint(3, 100, (2, 6))
        labels[:, -1] = 2
        dec = torch.cat([torch.full((2, 1), 2), labels[:, :-1]], dim=1)  # FSMT shifts input_ids, not labels
        inputs.update(decoder_input_ids=dec, labels=labels)
        return model, inputs

    return build


def _musicgen(train: bool):
    def build():
        import transformers as T

        cfg = T.MusicgenDecoderConfig(vocab_size=20, max_position_embeddings=32, num_hidden_layers=2, ffn_dim=32,
                                      num_attention_heads=2, hidden_size=16, num_codebooks=2, pad_token_id=19,
                                      bos_token_id=19, layerdrop=0.5 if train else 0.0)
        model = _mode(T.MusicgenForCausalLM(cfg), train)
        labels = torch.randint(0, 19, (1, 6, 2))
        return model, {"input_ids": torch.randint(0, 19, (2, 6)), "labels": labels}

    return build


def _luke_span(train: bool):
    def build():
        import transformers as T

        cfg = T.LukeConfig(vocab_size=100, entity_vocab_size=20, hidden_size=16, entity_emb_size=8,
                           num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                           max_position_embeddings=32, num_labels=3, use_entity_aware_attention=True)
        model = _mode(T.LukeForEntitySpanClassification(cfg), train)
        n, e = 10, 3
        pos = torch.full((1, e, 4), -1)
        pos[0, 0, :2] = torch.tensor([1, 2])
        pos[0, 1, :1] = torch.tensor([4])
        pos[0, 2, :3] = torch.tensor([6, 7, 8])
        inputs: dict[str, Any] = {"input_ids": _ids(n), "attention_mask": torch.ones(1, n, dtype=torch.long),
                                  "entity_ids": torch.tensor([[1, 1, 1]]),
                                  "entity_attention_mask": torch.ones(1, e, dtype=torch.long),
                                  "entity_position_ids": pos,
                                  "entity_start_positions": torch.tensor([[1, 4, 6]]),
                                  "entity_end_positions": torch.tensor([[2, 4, 8]])}
        if train:
            inputs["labels"] = torch.tensor([[0, 2, 1]])
        return model, inputs

    return build


def _deberta_cls():
    import transformers as T

    cfg = T.DebertaConfig(vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                          intermediate_size=32, max_position_embeddings=32, num_labels=3, relative_attention=True,
                          max_relative_positions=16, pos_att_type=["c2p", "p2c"])
    return T.DebertaForSequenceClassification(cfg).train(), {"input_ids": _ids(8), "labels": torch.tensor([2])}


def _wavlm(train: bool):
    def build():
        import transformers as T

        cfg = T.WavLMConfig(vocab_size=20, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                            intermediate_size=32, conv_dim=(8, 8), conv_stride=(4, 4), conv_kernel=(8, 4),
                            num_conv_pos_embeddings=4, num_conv_pos_embedding_groups=2, num_buckets=16,
                            max_bucket_distance=32, mask_time_prob=0.0, layerdrop=0.0, pad_token_id=0,
                            do_stable_layer_norm=False)
        model = _mode(T.WavLMForCTC(cfg), train)
        inputs: dict[str, Any] = {"input_values": torch.randn(1, 400)}
        if train:
            inputs["labels"] = torch.randint(1, 20, (1, 5))
        return model, inputs

    return build


def _speech2text():
    import transformers as T

    cfg = T.Speech2TextConfig(vocab_size=100, d_model=16, encoder_layers=1, decoder_layers=1,
                              encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
                              decoder_ffn_dim=32, max_source_positions=64, max_target_positions=32,
                              num_conv_layers=2, conv_channels=16, input_feat_per_channel=8, input_channels=1,
                              encoder_layerdrop=0.5, decoder_layerdrop=0.5, pad_token_id=1, decoder_start_token_id=2)
    return T.Speech2TextForConditionalGeneration(cfg).train(), {
        "input_features": torch.randn(1, 24, 8), "labels": torch.randint(3, 100, (1, 6))}


def _decision_transformer():
    import transformers as T

    cfg = T.DecisionTransformerConfig(state_dim=5, act_dim=3, hidden_size=16, max_ep_len=64, n_layer=1, n_head=2,
                                      n_inner=32, n_positions=64)
    t = 6
    return T.DecisionTransformerModel(cfg).eval(), {
        "states": torch.randn(1, t, 5), "actions": torch.randn(1, t, 3), "rewards": torch.randn(1, t, 1),
        "returns_to_go": torch.randn(1, t, 1), "timesteps": torch.arange(t).unsqueeze(0),
        "attention_mask": torch.ones(1, t, dtype=torch.long)}


def _bloom_cls():
    import transformers as T

    cfg = T.BloomConfig(vocab_size=100, hidden_size=16, n_layer=1, n_head=2, num_labels=3, pad_token_id=1)
    ids = torch.randint(3, 100, (2, 8))
    ids[1, -3:] = 1
    return T.BloomForSequenceClassification(cfg).eval(), {"input_ids": ids, "attention_mask": (ids != 1).long(),
                                                           "labels": torch.tensor([0, 2])}


def _bros_bbox(n: int) -> torch.Tensor:
    """``n`` normalised boxes (x1, y1, x2, y2) with x1 < x2 and y1 < y2."""
    xy = 0.6 * torch.rand(1, n, 2)
    return torch.cat([xy, xy + 0.05 + 0.3 * torch.rand(1, n, 2)], dim=-1)


def _bros_cfg():
    import transformers as T

    return T.BrosConfig(vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=32, dim_bbox_sinusoid_emb_2d=32,
                        dim_bbox_sinusoid_emb_1d=4, dim_bbox_projection=8, num_labels=3)


def _bros_token(train: bool):
    def build():
        import transformers as T

        model = _mode(T.BrosForTokenClassification(_bros_cfg()), train)
        n = 8
        first = torch.tensor([[1, 0, 1, 1, 0, 0, 1, 0]], dtype=torch.bool)  # first token of each box
        inputs: dict[str, Any] = {"input_ids": _ids(n), "bbox": _bros_bbox(n),
                                  "attention_mask": torch.ones(1, n, dtype=torch.long), "bbox_first_token_mask": first}
        if train:
            inputs["labels"] = torch.randint(0, 3, (1, n))
        return model, inputs

    return build


def _bros_spade_ee():
    import transformers as T

    model = T.BrosSpadeEEForTokenClassification(_bros_cfg()).train()
    n = 8
    mask = torch.ones(1, n, dtype=torch.long)
    mask[0, -2:] = 0  # two padding tokens
    first = torch.tensor([[1, 0, 1, 1, 0, 1, 0, 0]], dtype=torch.bool)
    return model, {"input_ids": _ids(n), "bbox": _bros_bbox(n), "attention_mask": mask,
                   "bbox_first_token_mask": first, "initial_token_labels": torch.randint(0, 3, (1, n)),
                   "subsequent_token_labels": torch.randint(0, n + 1, (1, n))}


def _higgs_audio(train: bool):
    def build():
        import transformers as T

        cfg = T.HiggsAudioV2Config(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                   num_attention_heads=2, num_key_value_heads=1, head_dim=8,
                                   max_position_embeddings=64, num_codebooks=2, codebook_size=16,
                                   audio_token_id=98, audio_bos_token_id=96, audio_delay_token_id=97,
                                   audio_stream_bos_id=14, audio_stream_eos_id=15, pad_token_id=0, bos_token_id=1,
                                   eos_token_id=2, use_cache=False)
        model = _mode(T.HiggsAudioV2ForConditionalGeneration(cfg), train)
        ids = torch.randint(3, 90, (1, 10))
        ids[0, 3:7] = 98  # four audio frames
        inputs: dict[str, Any] = {"input_ids": ids, "audio_input_ids": torch.randint(0, 14, (1, 4, 2)),
                                  "audio_input_ids_mask": torch.ones(1, 4, dtype=torch.bool)}
        if train:
            inputs["audio_labels"] = torch.randint(0, 14, (1, 4, 2))
        return model, inputs

    return build


def _deberta_mlm():
    import transformers as T

    cfg = T.DebertaConfig(vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                          intermediate_size=32, max_position_embeddings=32, relative_attention=True,
                          max_relative_positions=16, pos_att_type=["c2p", "p2c"])
    return T.DebertaForMaskedLM(cfg).eval(), {"input_ids": _ids(8), "labels": _ids(8)}


def _mvp_cls():
    import transformers as T

    cfg = T.MvpConfig(vocab_size=100, d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                      decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=32,
                      num_labels=3, pad_token_id=1, eos_token_id=2, bos_token_id=0, use_prompt=True,
                      prompt_length=4, prompt_mid_dim=16)
    ids = torch.randint(3, 100, (1, 8))
    ids[0, -1] = 2
    return T.MvpForSequenceClassification(cfg).eval(), {"input_ids": ids, "labels": torch.tensor([1])}


def _led():
    import transformers as T

    cfg = T.LEDConfig(vocab_size=100, d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                      decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
                      max_encoder_position_embeddings=64, max_decoder_position_embeddings=32, attention_window=[4],
                      pad_token_id=1, eos_token_id=2, bos_token_id=0, decoder_start_token_id=2)
    ids = torch.randint(3, 100, (1, 10))
    glob = torch.zeros(1, 10, dtype=torch.long)
    glob[0, 0] = 1
    return T.LEDForConditionalGeneration(cfg).train(), {"input_ids": ids, "global_attention_mask": glob,
                                                        "labels": torch.randint(3, 100, (1, 6))}


def _timesfm2_5():
    import transformers as T

    cfg = T.TimesFm2_5Config(patch_length=4, context_length=16, horizon_length=4, num_hidden_layers=1, hidden_size=16,
                             intermediate_size=32, head_dim=8, num_attention_heads=2, num_key_value_heads=2,
                             output_quantile_len=8, max_position_embeddings=32)
    return T.TimesFm2_5ModelForPrediction(cfg).eval(), {"past_values": [torch.randn(16), torch.randn(12)],
                                                         "future_values": torch.randn(2, 4)}


def _pocket_tts(train: bool):
    def build():
        import transformers as T

        flow = dict(hidden_size=16, num_hidden_layers=1, latent_dim=4, condition_dim=16, frequency_embedding_size=8,
                    loss_weighting_hidden_size=8, loss_weighting_num_layers=1)
        cfg = T.PocketTTSConfig(vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                num_key_value_heads=2, head_dim=8, intermediate_size=32, max_position_embeddings=64,
                                latent_dim=4, pad_token_id=3, audio_prompt_token_id=96, audio_latent_token_id=97,
                                audio_prompt_bos_token_id=98, audio_bos_token_id=99, flow_head_config=flow,
                                use_cache=False)
        model = _mode(T.PocketTTSForConditionalGeneration(cfg), train)
        ids = torch.randint(4, 90, (1, 10))
        ids[0, 6] = 99  # audio BOS, then one latent position per target frame
        ids[0, 7:] = 97
        return model, {"input_ids": ids, "labels": torch.randn(1, 3, 4)}

    return build


_ALL: dict[str, Job] = {j.name: j for j in (
    Job("xmod_lang_mlm_train", _xmod(True)),
    Job("xmod_lang_mlm_eval", _xmod(False)),
    Job("fsmt_translate_train", _fsmt(True)),
    Job("fsmt_translate_eval", _fsmt(False)),
    Job("musicgen_decoder_train", _musicgen(True)),
    Job("musicgen_decoder_eval", _musicgen(False)),
    Job("luke_entity_span_train", _luke_span(True)),
    Job("luke_entity_span_eval", _luke_span(False)),
    Job("deberta_v1_cls_train", _deberta_cls),
    Job("wavlm_ctc_train", _wavlm(True)),
    Job("wavlm_ctc_eval", _wavlm(False)),
    Job("speech2text_train", _speech2text),
    Job("decision_transformer_eval", _decision_transformer),
    Job("bloom_cls_eval", _bloom_cls),
    Job("bros_token_cls_train", _bros_token(True)),
    Job("bros_token_cls_eval", _bros_token(False)),
    Job("bros_spade_ee_train", _bros_spade_ee),
    Job("higgs_audio_v2_train", _higgs_audio(True)),
    Job("higgs_audio_v2_eval", _higgs_audio(False)),
    Job("deberta_v1_mlm_eval", _deberta_mlm),
    Job("mvp_prompt_cls_eval", _mvp_cls),
    Job("led_global_train", _led),
    Job("timesfm2_5_eval", _timesfm2_5),
    Job("pocket_tts_train", _pocket_tts(True)),
    Job("pocket_tts_eval", _pocket_tts(False)),
)}


JOBS: dict[str, Job] = _pick(
    _ALL, "xmod_lang_mlm_train", "xmod_lang_mlm_eval", "fsmt_translate_train", "fsmt_translate_eval",
    "musicgen_decoder_train", "deberta_v1_cls_train", "deberta_v1_mlm_eval", "bros_spade_ee_train",
    "higgs_audio_v2_train", "higgs_audio_v2_eval", "pocket_tts_train", "pocket_tts_eval",
)
"""The held-out breaking jobs (explain, torch 2.13 / transformers 5.25: 2-15 graphs), each breaking at least once in
its own family's code: X-MOD ``XmodOutput.lang_adapter`` (``hidden_states[lang_mask]``), FSMT ``make_padding_mask``
(``if not padding_mask.any()``), MusicGen ``MusicgenDecoder.forward`` (``random.uniform`` layer drop compared in a
Python ``if``), DeBERTa v1 ``DisentangledSelfAttention.disentangled_att_bias`` (slicing by the 0-d tensor of
``compute_attention_span``), BROS ``BrosSpadeEEForTokenClassification`` (mask-indexed loss), Higgs Audio v2
``HiggsAudioV2DecoderLayer``/``HiggsAudioV2Model`` (audio/text token routing by mask) and Pocket TTS (mask-selected
latents and ``update_latent_stats``). The X-MOD, MusicGen, Higgs Audio v2 and Pocket TTS jobs also break once at
the shared output-capturing wrapper (``transformers/utils/output_capturing.py:332``); ``deberta_v1_cls_train`` also breaks at the ``nonzero`` of its
classification loss, which DeBERTa-v2 has too; the Pocket TTS jobs also break in the shared LSD loss
(``transformers/loss/loss_lsd.py``) and at a ``torch_compilable_check``."""

NEAR_COPIES: dict[str, Job] = _pick(_ALL, "wavlm_ctc_train", "mvp_prompt_cls_eval", "led_global_train", "speech2text_train")
"""Breaking jobs whose every break is at code copied from a family already used, or at a generic pattern: WavLM's
breaks are wav2vec2's (the feature encoder's ``hidden_states.requires_grad = True``, the ``labels.max()`` check of
the CTC head; WavLM's modeling file is generated from a modular file built on wav2vec2) plus the shared CTC loss
(``transformers/loss/loss_ctc.py``); its own relative-position buckets compile. MVP's only break is BART's
``<eos>`` pooling, the same code as PLBart's. LED's self-attention is "Copied from" Longformer's and its encoder's
other breaks (``logger.warning_once`` on padding to the window, ``is_global_attn ... .item()``) mirror
``LongformerModel``/``LongformerEncoder`` line for line. Speech2Text breaks only at the Bart-style layer drop
(``dropout_probability = torch.rand([])`` then ``if dropout_probability < self.layerdrop``, also in Whisper and a
few dozen other seq2seq families) and the shared output-capturing wrapper."""

NOT_BREAKING: dict[str, Job] = _pick(
    _ALL, "musicgen_decoder_eval", "luke_entity_span_train", "luke_entity_span_eval", "wavlm_ctc_eval",
    "decision_transformer_eval", "bloom_cls_eval", "bros_token_cls_train", "bros_token_cls_eval", "timesfm2_5_eval",
)
"""Measured with 0 graph breaks (explain: 1 graph) on torch 2.13 / transformers 5.25: not in :data:`JOBS`.
``bros_token_cls_train`` is odd: Dynamo's graph-break log shows breaks at its mask-indexed loss
(``bros/modeling_bros.py:696-697``: ``aten.nonzero``, then no bytecode reconstruction for a lambda), but explain
reports 1 graph and 0 breaks."""

NOT_BUILT: dict[str, str] = {
    "fsmt_translate_labels_only": "FSMT builds its decoder inputs by shifting `input_ids`, not `labels`, so labels "
                                  "of another length fail the loss (ValueError: input batch_size 16 vs target 12); "
                                  "the FSMT jobs pass `decoder_input_ids` (the labels shifted right) explicitly",
    "musicgen_melody_train": "not built: its decoder's layer drop is \"Copied from\" MusicGen's (musicgen_decoder_train)",
    "bigbird_pegasus": "not built: its block-sparse attention is \"Copied from\" BigBird (already used)",
    "lasr_ctc_train": "not built: reading the source, its only data-dependent code is the Bart-style layer drop and the "
                      "shared CTC loss (the output-length `max()` is bypassed by `target_length`)",
    "parakeet_ctc_train": "not built: its CTC loss is the shared `self.loss_function`; the `blank_mask.all()` branch "
                          "is in generation only",
}
"""Tried and dropped, built differently, or read and skipped, with the reason."""

MEASURABLE: dict[str, Job] = dict(_ALL)
"""Every job this file defines, the non-breaking ones included."""
