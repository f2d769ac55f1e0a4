"""Seventh held-out jobs outside vision: retrieval, encoder-decoder and decision-head families new to the corpora.

A seventh held-out set for the advisor (scan of 2026-12-05, torch 2.13 / transformers 5.25.0, CPU), chosen only by
novelty (families absent from every earlier corpus, scan and job list) and by breaking in their own family code (the
advisor was not read or run): RAG, retrieval-augmented generation given the retrieved passages and their scores (its
own ``get_nll`` of ``RagSequenceForGeneration`` and ``RagTokenForGeneration`` masks the padded answer tokens under
``if pad_mask.any():``), the Bert2Bert ``EncoderDecoderModel`` computing its loss from ``labels`` (its own ``forward``
calls ``warnings.warn(DEPRECATION_WARNING, FutureWarning)`` whenever labels are given) and JEV, a decision head on a
Qwen 3.5 text model (its own ``JevForDecision.forward`` selects each question's option scores with a boolean mask,
and its loss ``JevForDecisionLoss`` validates the labels with ``if ... torch.any(...)`` and sizes
``torch.arange(num_options.max())``). None is MoE. :data:`JOBS` break, each at least once in its own family's code;
:data:`NEAR_COPIES` break only in a used family's code (the speech encoder-decoder in Wav2Vec2's); :data:`NOT_BREAKING`
compile whole. Train jobs and ``*_eval_loss`` jobs (``model.eval()`` with labels, an evaluation loss) run the loss;
``*_eval`` jobs have no labels. Same shape as :mod:`tests.models.corpus_sixth_text`: a
:class:`~tests.models.corpus.Job` builds its model offline from a tiny config (random weights, nothing downloaded;
:meth:`~tests.models.corpus.Job.make` seeds torch, numpy and random with 0 before ``build``) and returns it in its mode
with its keyword inputs. Each job was measured with ``python -m tests.models.explain_check_seventh JOB`` (one eager
call, then ``torch._dynamo.explain`` of one call, fresh process, ``OMP_NUM_THREADS=1``) twice, with the same counts
both times; the figures and the source line of every break are in ``docs/corpus-seventh-scan.md``. The advisor
was not run on any of them while they were chosen.
"""

from __future__ import annotations

from typing import Any

import torch

from tests.models.corpus import Job, _mode, _pick

__all__ = ["JOBS", "MEASURABLE", "NEAR_COPIES", "NOT_BREAKING", "NOT_BUILT"]


def _rag(kind: str, train: bool, labels: bool):
    def build():
        import transformers as T

        question = T.DPRConfig(vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                               intermediate_size=32, max_position_embeddings=64)
        generator = T.BartConfig(vocab_size=100, d_model=16, encoder_layers=1, decoder_layers=1,
                                 encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
                                 decoder_ffn_dim=32, max_position_embeddings=64, pad_token_id=1, bos_token_id=0,
                                 eos_token_id=2, decoder_start_token_id=2, forced_bos_token_id=0)
        cfg = T.RagConfig.from_question_encoder_generator_configs(question, generator, n_docs=2)
        cls = T.RagSequenceForGeneration if kind == "sequence" else T.RagTokenForGeneration
        model = _mode(cls(cfg), train)
        # 2 questions x 2 retrieved passages each: "<s> title / passage // question </s>", right-padded
        context = torch.randint(3, 100, (4, 12))
        context[:, 0] = 0
        context_mask = torch.ones(4, 12, dtype=torch.long)
        for row, length in enumerate((12, 10, 11, 9)):
            context[row, length - 1] = 2
            context[row, length:] = 1
            context_mask[row, length:] = 0
        inputs: dict[str, Any] = {"context_input_ids": context, "context_attention_mask": context_mask,
                                  "doc_scores": torch.randn(2, 2)}
        if labels:
            answers = torch.randint(3, 100, (2, 8))  # "<s> answer </s>", the second answer padded
            answers[:, 0] = 0
            answers[0, 7] = 2
            answers[1, 5] = 2
            answers[1, 6:] = 1
            inputs["labels"] = answers
        else:
            inputs["decoder_input_ids"] = torch.tensor([[2, 0, 17, 45, 63]] * 2)
        return model, inputs

    return build


def _bert2bert(train: bool, labels: bool):
    def build():
        import transformers as T

        common = dict(vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                      intermediate_size=32, max_position_embeddings=64, pad_token_id=0)
        cfg = T.EncoderDecoderConfig.from_encoder_decoder_configs(
            T.BertConfig(**common), T.BertConfig(**common, is_decoder=True, add_cross_attention=True))
        cfg.decoder_start_token_id = 2  # [CLS]
        cfg.pad_token_id = 0
        model = _mode(T.EncoderDecoderModel(config=cfg), train)
        ids = torch.randint(5, 100, (2, 12))
        ids[:, 0], ids[:, -1] = 2, 3  # [CLS] ... [SEP]
        mask = torch.ones(2, 12, dtype=torch.long)
        ids[1, 9], ids[1, 10:], mask[1, 10:] = 3, 0, 0
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if labels:
            targets = torch.randint(5, 100, (2, 8))  # "[CLS] summary [SEP]", the second one padded with -100
            targets[:, 0], targets[:, -1] = 2, 3
            targets[1, 5], targets[1, 6:] = 3, -100
            inputs["labels"] = targets
        else:
            inputs["decoder_input_ids"] = torch.tensor([[2, 17, 45, 63]] * 2)
        return model, inputs

    return build


def _speech_encoder_decoder(train: bool):
    def build():
        import transformers as T

        encoder = T.Wav2Vec2Config(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                                   conv_dim=(8, 8), conv_stride=(4, 2), conv_kernel=(8, 4), num_conv_pos_embeddings=4,
                                   num_conv_pos_embedding_groups=2)
        decoder = T.BertConfig(vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                               intermediate_size=32, max_position_embeddings=64, pad_token_id=0, is_decoder=True,
                               add_cross_attention=True)
        cfg = T.SpeechEncoderDecoderConfig.from_encoder_decoder_configs(encoder, decoder)
        cfg.decoder_start_token_id = 2
        cfg.pad_token_id = 0
        model = _mode(T.SpeechEncoderDecoderModel(config=cfg), train)
        inputs: dict[str, Any] = {"input_values": torch.randn(1, 1600)}
        if train:
            labels = torch.randint(5, 100, (1, 8))
            labels[:, 0], labels[:, -1] = 2, 3
            inputs["labels"] = labels
        else:
            inputs["decoder_input_ids"] = torch.tensor([[2, 17, 45, 63]])
        return model, inputs

    return build


def _zamba(train: bool):
    def build():
        import transformers as T

        cfg = T.ZambaConfig(vocab_size=100, hidden_size=16, attention_hidden_size=32, intermediate_size=32,
                            num_hidden_layers=4, num_attention_heads=2, num_key_value_heads=2, n_mamba_heads=2,
                            layers_block_type=["linear_attention", "hybrid"] * 2, max_position_embeddings=64,
                            mamba_d_state=4,
                            mamba_dt_rank=4, use_mamba_kernels=False)
        model = _mode(T.ZambaForCausalLM(cfg), train)
        ids = torch.randint(3, 100, (1, 12))
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
        if train:
            inputs["labels"] = ids.clone()
        return model, inputs

    return build


def _jev(train: bool, labels: bool):
    def build():
        import transformers as T

        text = dict(model_type="qwen3_5_text", vocab_size=100, hidden_size=16, intermediate_size=32,
                    num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, head_dim=8,
                    linear_key_head_dim=8, linear_value_head_dim=8, linear_num_key_heads=2, linear_num_value_heads=2,
                    layer_types=["linear_attention", "full_attention"], max_position_embeddings=64)
        # 24 verbalizer rows, the default offsets: noul options from row 0, score from 2, choice from 8
        cfg = T.JevConfig(hidden_size=16, text_config=text)
        model = _mode(T.JevForDecision(cfg), train)
        # one prompt with three questions, each closed by a <|mark|> token (id 99): a true/false ("noul") question,
        # a 5-level score and a 4-option choice
        ids = torch.randint(3, 99, (1, 30))
        marks = torch.tensor([[9, 19, 29]])
        ids[0, marks[0]] = 99
        inputs: dict[str, Any] = {"input_ids": ids, "marks": marks, "num_options": torch.tensor([[2, 5, 4]]),
                                  "question_type_ids": torch.tensor([[0, 2, 1]])}
        if labels:
            inputs["labels"] = torch.tensor([[1, 3, 2]])  # the option index of each question
        return model, inputs

    return build


_ALL: dict[str, Job] = {j.name: j for j in (
    Job("rag_sequence_train", _rag("sequence", True, True)),
    Job("rag_sequence_eval_loss", _rag("sequence", False, True)),
    Job("rag_sequence_eval", _rag("sequence", False, False)),
    Job("rag_token_train", _rag("token", True, True)),
    Job("rag_token_eval_loss", _rag("token", False, True)),
    Job("rag_token_eval", _rag("token", False, False)),
    Job("bert2bert_train", _bert2bert(True, True)),
    Job("bert2bert_eval_loss", _bert2bert(False, True)),
    Job("bert2bert_eval", _bert2bert(False, False)),
    Job("speech_encoder_decoder_train", _speech_encoder_decoder(True)),
    Job("speech_encoder_decoder_eval", _speech_encoder_decoder(False)),
    Job("jev_train", _jev(True, True)),
    Job("jev_eval_loss", _jev(False, True)),
    Job("jev_eval", _jev(False, False)),
    Job("zamba_train", _zamba(True)),
    Job("zamba_eval", _zamba(False)),
)}

JOBS: dict[str, Job] = _pick(
    _ALL, "rag_sequence_train", "rag_sequence_eval_loss", "rag_token_train", "rag_token_eval_loss", "bert2bert_train",
    "bert2bert_eval_loss", "jev_train", "jev_eval_loss",
)
"""The breaking jobs, each breaking at least once in its own family's code: RAG ``RagSequenceForGeneration.get_nll``
and ``RagTokenForGeneration.get_nll`` (``if pad_mask.any():`` in their ``_mask_pads``, the only site, train and
eval with labels alike); ``EncoderDecoderModel.forward`` (``warnings.warn(DEPRECATION_WARNING, FutureWarning)`` when
``labels`` are given, the only site); JEV ``JevForDecision.forward`` (boolean-mask selection of the option scores,
``logits[(rows >= starts[:, None]) & (rows < (starts + num_options)[:, None])]``) and its loss ``JevForDecisionLoss``
(``if not soft_labels and torch.any(...)`` and ``torch.arange(num_options.max())``).
``docs/corpus-seventh-scan.md`` lists every site."""

NEAR_COPIES: dict[str, Job] = _pick(_ALL, "speech_encoder_decoder_train")
"""Breaking jobs whose every break is at code of a family already used: the speech encoder-decoder (Wav2Vec2 encoder,
BERT decoder) in training breaks only in Wav2Vec2's feature encoder (``hidden_states.requires_grad = True``) and its
SpecAugment ``_compute_mask_indices`` (``np.random.rand(1).item()``); its own ``forward`` compiles."""

NOT_BREAKING: dict[str, Job] = _pick(
    _ALL, "rag_sequence_eval", "rag_token_eval", "bert2bert_eval", "jev_eval", "speech_encoder_decoder_eval",
    "zamba_train", "zamba_eval",
)
"""Measured with 0 graph breaks (explain: 1 graph): not in :data:`JOBS`. ``jev_eval`` records one break reason
(GB0036, the boolean-mask selection of ``JevForDecision.forward``, its last tensor operation) with a graph break count
of 0."""

NOT_BUILT: dict[str, str] = {
    "higgs_audio_v2_tokenizer": "read and skipped: modular from X-codec (used); Higgs Audio v2 itself is used",
    "vibevoice_acoustic_tokenizer": "read and skipped: the VibeVoice-ASR jobs (used) build its encoder",
    "text_and_audio_probed": "probed with a scratch explain script (not the checker), 0 graph breaks, not added: "
                            "GPT-NeoX-Japanese (causal LM, train), MPT (sequence classification, train), OPT (causal "
                            "LM, train), GPTBigCode (sequence classification, train), GTE (masked LM, train), ERNIE "
                            "(pre-training with task type ids, train), ALBERT (pre-training, train), DPR reader "
                            "(eval), Audio Spectrogram Transformer (classification, train), Muse Glimmer assistant "
                            "(eval)",
    "text_lms_read": "read (grep of the modeling files) and skipped, no data-dependent code in a forward pass: Arcee, "
                     "OLMo 2, Hunyuan v1 dense, Granite SWA, Ministral, Ministral 3, Phi-3, BertGeneration, "
                     "CamemBERT, XLM-RoBERTa, RoBERTa-PreLayerNorm; InternLM3 and IQuestCoder have no modeling file; "
                     "Blenderbot-small is copied from BART (used)",
    "moe_or_vision": "not built: MoE (Jamba, Kolibri 1.1, Mistral 4, Mistral Large 4, MiMo-V2-Flash, Granite MoE "
                     "hybrid / shared / SWA, DBRX, Dots1, AFMoE, ...) or with a vision path (Inkling 2, T5Gemma 2, "
                     "Pi0.5: the vision helper's)",
}
"""Tried and dropped, built differently, or read and skipped, with the reason."""

MEASURABLE: dict[str, Job] = dict(_ALL)
"""Every job this file defines, the non-breaking ones included."""
