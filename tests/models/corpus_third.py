"""The third held-out corpus: families chosen after stop 44 and measured once.

Issue 27 asks for the advisor's figures on families nobody looked at while building its remedies. The
first two held-out sets (:mod:`tests.models.corpus_fresh`, :mod:`tests.models.corpus_heldout`) stopped
being held out once remedies were built on them. These jobs were scanned from transformers 5.25 on
2026-12-05; their baselines were written down and committed before the advisor ran on any of them, and
the advisor was run on them once (``benchmarks/advisor_corpus.py --corpus third``). Vision jobs:
:mod:`tests.models.corpus_third_vision`; text, audio and protein-text: :mod:`tests.models.corpus_third_text`.
Where each job breaks: ``docs/corpus-third-scan.md``. Same names as :mod:`tests.models.corpus_fresh`.
"""

from __future__ import annotations

from tests.models import corpus_third_text as _text
from tests.models import corpus_third_vision as _vision
from tests.models.corpus import merge_corpora

__all__ = ["JOBS", "MEASURABLE", "NEAR_COPIES", "NOT_BREAKING", "NOT_BUILT"]

JOBS, NEAR_COPIES, NOT_BREAKING, NOT_BUILT, MEASURABLE = merge_corpora(_vision, _text)
