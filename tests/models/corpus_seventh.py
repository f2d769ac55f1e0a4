"""The seventh held-out corpus: families chosen after stop 49 and measured once.

Like :mod:`tests.models.corpus_fourth`: scanned from transformers 5.25 on 2026-12-05 by helpers told to choose by
novelty only (families no earlier corpus uses, breaking in their own code) and not to read or run the advisor;
their baselines were written down and committed before the advisor ran on any of them, and the advisor was run
on them once (``benchmarks/advisor_corpus.py --corpus seventh``). Vision jobs: :mod:`tests.models.corpus_seventh_vision`;
the rest: :mod:`tests.models.corpus_seventh_text`; a third scan, for families neither helper used or tried:
:mod:`tests.models.corpus_seventh_more`. Where each job breaks: ``docs/corpus-seventh-scan.md``.
"""

from __future__ import annotations

from tests.models import corpus_seventh_more as _more
from tests.models import corpus_seventh_text as _text
from tests.models import corpus_seventh_vision as _vision
from tests.models.corpus import merge_corpora

__all__ = ["JOBS", "MEASURABLE", "NEAR_COPIES", "NOT_BREAKING", "NOT_BUILT"]

JOBS, NEAR_COPIES, NOT_BREAKING, NOT_BUILT, MEASURABLE = merge_corpora(_vision, _text, _more)
