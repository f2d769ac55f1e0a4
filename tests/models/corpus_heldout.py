"""The second held-out corpus: families chosen and measured after the last remedy was built.

Issue 27 asks for the advisor's figures on families nobody looked at while building its
remedies. The first held-out set (:mod:`tests.models.corpus_fresh`) stopped being one once fixes
were found on it (Grounding DINO's ``size-check``). These jobs were scanned from transformers 5.25
on 2026-12-04, after ``size-check``; their baselines were written down before the advisor ran on
any of them, and the advisor was run on them once (``benchmarks/advisor_corpus.py --corpus
heldout``), with no change to nstviz after. Vision jobs: :mod:`tests.models.corpus_heldout_vision`;
text, audio and the rest: :mod:`tests.models.corpus_heldout_text`. Same names as
:mod:`tests.models.corpus_fresh`.
"""

from __future__ import annotations

from tests.models import corpus_heldout_text as _text
from tests.models import corpus_heldout_vision as _vision
from tests.models.corpus import merge_corpora

__all__ = ["JOBS", "MEASURABLE", "NEAR_COPIES", "NOT_BREAKING", "NOT_BUILT"]

JOBS, NEAR_COPIES, NOT_BREAKING, NOT_BUILT, MEASURABLE = merge_corpora(_vision, _text)
