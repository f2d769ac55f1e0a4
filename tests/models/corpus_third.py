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
from tests.models.corpus import Job

__all__ = ["JOBS", "MEASURABLE", "NEAR_COPIES", "NOT_BREAKING", "NOT_BUILT"]

JOBS: dict[str, Job] = {**_vision.JOBS, **_text.JOBS}
"""The breaking jobs, each breaking at least once in its own family's code."""
NEAR_COPIES: dict[str, Job] = {**_vision.NEAR_COPIES, **_text.NEAR_COPIES}
"""Breaking jobs whose every break is at code copied from a family already used."""
NOT_BREAKING: dict[str, Job] = {**_vision.NOT_BREAKING, **_text.NOT_BREAKING}
"""Measured with 0 graph breaks: not in :data:`JOBS`."""
NOT_BUILT: dict[str, str] = {**_vision.NOT_BUILT, **_text.NOT_BUILT}
"""Tried and dropped, with the reason."""
MEASURABLE: dict[str, Job] = {**_vision.MEASURABLE, **_text.MEASURABLE}
"""Every job both files define, the non-breaking ones included."""
