"""Seventh held-out jobs, third part: the families neither seventh helper nor any earlier corpus used or tried.

A third scan for the seventh held-out set (2026-12-05, torch 2.13 / transformers 5.25.0, CPU), chosen only by novelty
(families absent from every ``tests/models/*.py`` job, every ``docs/corpus-*-scan*.md`` file, the NOT_BUILT and
NOT_BREAKING lists of the vision and text helpers, and ``/tmp/s/used_jobs.txt``; not MoE) and by breaking in their
own family code (the advisor was not read or run). Every one of the 567 model folders of transformers 5.25 was
checked against those names (with ``_``, ``-``, ``.`` and spaces folded, substring collisions such as Phi vs
Phi-3, GLM vs GLM-4V, Pegasus vs Pegasus-X, OLMo vs OLMo 2, OpenAI GPT vs OpenAI privacy filter, Cohere vs Cohere
ASR checked by hand). The non-MoE families left unused were Pegasus, OpenAI GPT, Phi, GLM, GLM-4, OLMo, EXAONE 4,
ERNIE 4.5, Apertus, Cohere, Cohere 2, Nemotron and DINOv3 ConvNeXt. None of them has data-dependent code in a forward
pass or a loss, and every job built from them compiles whole (1 graph, 0 breaks), so :data:`JOBS` and
:data:`NEAR_COPIES` are empty and all of them are in :data:`NOT_BREAKING`. Every other folder whose modeling file has
a data-dependent site (``.item()``, ``nonzero``, ``.any()`` / ``.all()``, ``tolist``, ``warnings.warn``, ...) is
either MoE or named by an earlier corpus or scan. Same shape as :mod:`tests.models.corpus_seventh_text`: a
:class:`~tests.models.corpus.Job` builds its model offline from a tiny config (random weights, nothing downloaded;
:meth:`~tests.models.corpus.Job.make` seeds torch, numpy and random with 0 before ``build``) and returns it in its mode
with its keyword inputs; train jobs run in train mode with labels, ``*_eval_loss`` in eval mode with labels, ``*_eval``
in eval mode without. Each job was measured with ``python -m tests.models.explain_check_seventh JOB`` (one eager call,
then ``torch._dynamo.explain`` of one call, fresh process, ``OMP_NUM_THREADS=1``) twice, with the same counts both
times; the figures are in ``docs/corpus-seventh-scan.md``.
"""

from __future__ import annotations

from typing import Any

import torch

from tests.models.corpus import Job, _mode, _pick

__all__ = ["JOBS", "MEASURABLE", "NEAR_COPIES", "NOT_BREAKING", "NOT_BUILT"]


def _pegasus(train: bool, labels: bool):
    def build():
        import transformers as T

        cfg = T.PegasusConfig(vocab_size=100, d_model=16, encoder_layers=1, decoder_layers=1,
                              encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
                              decoder_ffn_dim=32, max_position_embeddings=64, pad_token_id=0, eos_token_id=1,
                              decoder_start_token_id=0, forced_eos_token_id=1)
        model = _mode(T.PegasusForConditionalGeneration(cfg), train)
        # two documents "... </s>", the second right-padded
        ids = torch.randint(3, 100, (2, 16))
        mask = torch.ones(2, 16, dtype=torch.long)
        ids[0, -1] = 1
        ids[1, 11], ids[1, 12:], mask[1, 12:] = 1, 0, 0
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if labels:
            targets = torch.randint(3, 100, (2, 8))  # "summary </s>", the second one padded with -100
            targets[0, -1] = 1
            targets[1, 5], targets[1, 6:] = 1, -100
            inputs["labels"] = targets
        else:
            inputs["decoder_input_ids"] = torch.tensor([[0, 17, 45, 63]] * 2)
        return model, inputs

    return build


def _openai_gpt(head: str, train: bool):
    def build():
        import transformers as T

        cfg = T.OpenAIGPTConfig(vocab_size=100, n_positions=64, n_embd=16, n_layer=1, n_head=2)
        if head == "double":
            model = _mode(T.OpenAIGPTDoubleHeadsModel(cfg), train)
            # one story with two candidate endings (RocStories-style), each closed by a [CLS]-like token (id 99)
            ids = torch.randint(3, 99, (1, 2, 12))
            ids[0, :, -1] = 99
            inputs: dict[str, Any] = {"input_ids": ids, "mc_token_ids": torch.tensor([[11, 11]])}
            if train:
                inputs["labels"] = ids.clone()
                inputs["mc_labels"] = torch.tensor([1])
            return model, inputs
        cfg.pad_token_id = 0
        cfg.num_labels = 3
        model = _mode(T.OpenAIGPTForSequenceClassification(cfg), train)
        ids = torch.randint(3, 100, (2, 12))
        mask = torch.ones(2, 12, dtype=torch.long)
        ids[1, 9:], mask[1, 9:] = 0, 0
        inputs = {"input_ids": ids, "attention_mask": mask}
        if train:
            inputs["labels"] = torch.tensor([2, 0])
        return model, inputs

    return build


def _lm(config: str, cls: str, train: bool, **extra: Any):
    def build():
        import transformers as T

        common = dict(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64)
        common.update(extra)
        model = _mode(getattr(T, cls)(getattr(T, config)(**common)), train)
        ids = torch.randint(3, 100, (1, 12))
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
        if train:
            inputs["labels"] = ids.clone()
        return model, inputs

    return build


def _dinov3_convnext(train: bool):
    def build():
        import transformers as T

        cfg = T.DINOv3ConvNextConfig(num_channels=3, hidden_sizes=[8, 16], depths=[1, 1], drop_path_rate=0.1,
                                     image_size=32)
        model = _mode(T.DINOv3ConvNextModel(cfg), train)
        return model, {"pixel_values": torch.randn(2, 3, 32, 32)}

    return build


_ALL: dict[str, Job] = {j.name: j for j in (
    Job("pegasus_train", _pegasus(True, True)),
    Job("pegasus_eval_loss", _pegasus(False, True)),
    Job("pegasus_eval", _pegasus(False, False)),
    Job("openai_gpt_double_heads_train", _openai_gpt("double", True)),
    Job("openai_gpt_double_heads_eval", _openai_gpt("double", False)),
    Job("openai_gpt_seq_cls_train", _openai_gpt("cls", True)),
    Job("phi_causal_lm_train", _lm("PhiConfig", "PhiForCausalLM", True, num_key_value_heads=2)),
    Job("glm_causal_lm_train", _lm("GlmConfig", "GlmForCausalLM", True, head_dim=8, pad_token_id=0)),
    Job("glm4_causal_lm_train", _lm("Glm4Config", "Glm4ForCausalLM", True, head_dim=8, pad_token_id=0)),
    Job("olmo_causal_lm_train", _lm("OlmoConfig", "OlmoForCausalLM", True, clip_qkv=8.0)),
    Job("exaone4_causal_lm_train", _lm("Exaone4Config", "Exaone4ForCausalLM", True, sliding_window=4,
                                       layer_types=["sliding_attention", "full_attention"])),
    Job("ernie4_5_causal_lm_train", _lm("Ernie4_5Config", "Ernie4_5ForCausalLM", True, head_dim=8)),
    Job("cohere_causal_lm_train", _lm("CohereConfig", "CohereForCausalLM", True, pad_token_id=0)),
    Job("cohere2_causal_lm_train", _lm("Cohere2Config", "Cohere2ForCausalLM", True, pad_token_id=0, sliding_window=4,
                                       layer_types=["sliding_attention", "full_attention"])),
    Job("nemotron_causal_lm_train", _lm("NemotronConfig", "NemotronForCausalLM", True, head_dim=8)),
    Job("dinov3_convnext_train", _dinov3_convnext(True)),
    Job("dinov3_convnext_eval", _dinov3_convnext(False)),
    Job("apertus_causal_lm_train", _lm("ApertusConfig", "ApertusForCausalLM", True)),
)}

JOBS: dict[str, Job] = _pick(_ALL)
"""The breaking jobs, each breaking at least once in its own family's code: none. No family left unused by the earlier
corpora and scans (MoE aside) breaks; ``docs/corpus-seventh-scan.md`` says how that was checked."""

NEAR_COPIES: dict[str, Job] = _pick(_ALL)
"""Breaking jobs whose every break is at code of a family already used, or at a shared helper: none (no job here
breaks at all)."""

NOT_BREAKING: dict[str, Job] = _pick(
    _ALL, "pegasus_train", "pegasus_eval_loss", "pegasus_eval", "openai_gpt_double_heads_train",
    "openai_gpt_double_heads_eval", "openai_gpt_seq_cls_train", "phi_causal_lm_train", "glm_causal_lm_train",
    "glm4_causal_lm_train", "olmo_causal_lm_train", "exaone4_causal_lm_train", "ernie4_5_causal_lm_train",
    "cohere_causal_lm_train", "cohere2_causal_lm_train", "nemotron_causal_lm_train", "dinov3_convnext_train",
    "dinov3_convnext_eval", "apertus_causal_lm_train",
)
"""Measured with 0 graph breaks (explain: 1 graph, no break reason) twice: not in :data:`JOBS`. Pegasus's own
``PegasusForConditionalGeneration.forward`` has ``logger.warning(...)`` under ``if labels is not None: if use_cache:``,
but ``use_cache`` arrives as ``None`` (the config's ``use_cache`` is read later, in the decoder), so the branch is not
taken with labels either; OpenAI GPT's ``warn_if_padding_and_no_attention_mask`` (a shared helper) returns early when
traced; OLMo's ``clip_qkv`` is a ``clamp_``; the rest are Llama-style decoders or a ConvNeXt with stochastic depth."""

NOT_BUILT: dict[str, str] = {
    "moe_unused": "not built: MoE, excluded (the only other families no earlier corpus or scan names): DeepSeek "
                  "V3.2, DeepSeek V4, EXAONE MoE, FlexOlmo, GLM-4 MoE lite, GLM MoE DSA, Granite MoE SWA, Granite "
                  "MoE shared, LongCat-Flash, MiniCPM 5 MoE, MiniMax M2, Inkling 2 loop, HY v4",
    "pegasus_causal_lm": "read and skipped: PegasusForCausalLM.forward is `# Copied from` BartForCausalLM (BART "
                         "used), and its decoder layers are copied from mBART (used)",
    "generic_heads": "read and skipped: the sequence / token classification and QA heads of Phi, GLM, GLM-4, OLMo, "
                     "EXAONE 4 and Apertus are the shared GenericFor* helpers (no family code of their own)",
    "dinov3_convnext_backbone": "read and skipped: DINOv3ConvNextBackbone runs the same stages as the model job",
    "timm_backbone": "not built: needs timm, which is not installed",
    "named_by_wildcard": "not built: named by an earlier scan under another spelling, so used: PP-OCRv6 det / rec "
                         "and PP-LCNet v3 / v4 (`pp_ocrv6_*`, `pp_lcnet*`), TIPSv2 DPT (TIPSv2), ViTPose backbone "
                         "(ViTPose), XLM-RoBERTa XL (XLM-R XL), DINOv3 ViT (DINOv3)",
}
"""Tried and dropped, built differently, or read and skipped, with the reason."""

MEASURABLE: dict[str, Job] = dict(_ALL)
"""Every job this file defines, the non-breaking ones included."""
