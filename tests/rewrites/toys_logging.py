"""Code of our own that logs inside compiled code, and that guards a masked write by "the mask selects anything"."""

from __future__ import annotations

import logging

logger = logging.getLogger("nstviz.tests.toys_logging")


def scale_with_default(x, factor=None):
    """A fallback that tells the user (transformers' ``num_delay_tokens`` warning): a log call mid-graph."""
    x = x * 2
    if factor is None:
        factor = 3
        logger.warning("`factor` was not provided; falling back to %s", factor)
    return x * factor + 1


def average_positions(emb, align):
    """VisualBERT's alignment average: zero counts set to 1 to avoid dividing by zero, with a warning."""
    counts = (align != -1).float().sum(2)
    if (counts == 0).sum() != 0:
        counts[counts == 0] = 1
        logger.warning("Found 0 values in the counts. Setting them to 1 to avoid divide-by-zero")
    return emb / counts.unsqueeze(-1)


def clamp_other_mask(x, m):
    """The write's mask is not the guard's: dropping the guard would change nothing here, but it is not proven."""
    if (m > 0).any():
        x[m > 1] = 0
    return x
