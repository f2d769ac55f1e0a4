"""Toys for the kinds of loss and training code the seventh held-out set showed (RAG, BERT-to-BERT, TrOCR, JEV).

A nested helper that zeroes padded positions under ``if pad_mask.any():``; a forward that warns with
``warnings.warn`` when given labels (-100 marks ignored positions); a block that logs, then runs
dropout under gradient checkpointing; a loss whose checks mix a Python flag, a size and tensor data.
"""

from __future__ import annotations

import logging
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as checkpoint

logger = logging.getLogger("nstviz.tests.toys_losses")


def padded_nll(logprobs: torch.Tensor, target: torch.Tensor, pad_id: int = 0) -> torch.Tensor:
    """Negative log-likelihood with padded positions zeroed by a nested helper (as RAG's ``get_nll``)."""

    def _mask_pads(ll: torch.Tensor) -> torch.Tensor:
        pad_mask = target.eq(pad_id)
        if pad_mask.any():
            ll.masked_fill_(pad_mask, 0.0)
        return ll

    ll = logprobs.gather(dim=-1, index=target.unsqueeze(-1)).squeeze(-1)
    return -_mask_pads(ll).sum()


class Tagger(nn.Module):
    """Token tagging whose loss path warns that passing labels is deprecated (as ``EncoderDecoderModel``)."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(20, 8)
        self.head = nn.Linear(8, 20)

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor | None = None) -> torch.Tensor:
        logits = self.head(self.embed(input_ids))
        if labels is None:
            return logits
        warnings.warn("passing labels is deprecated", FutureWarning)  # noqa: B028 (as transformers writes it)
        return F.cross_entropy(logits.reshape(-1, 20), labels.reshape(-1), ignore_index=-100)


class CheckpointedBlock(nn.Module):
    """A block that logs, then runs dropout under gradient checkpointing (as TrOCR's decoder in training)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.5)

    def inner(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(torch.relu(self.fc(x)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.tanh(x)
        logger.warning("gradient checkpointing is on: the cache is not used")
        return checkpoint.checkpoint(self.inner, x, use_reentrant=False).sum()


def option_loss(logits: torch.Tensor, labels: torch.Tensor, soft_labels: bool = False) -> torch.Tensor:
    """A loss whose checks mix a Python flag, a size and tensor data (as JEV's loss)."""
    expected = logits.numel() // logits.shape[-1] if not soft_labels else logits.numel()
    if labels.numel() != expected:
        raise ValueError("one label per row")
    if not soft_labels and torch.any((labels < 0) | (labels >= logits.shape[-1])):
        raise ValueError("each label must select a column")
    return F.cross_entropy(logits, labels)
