"""The cyclic garbage collector's setting in the test processes (pytest's workers, the fork server).

Compiling real models allocates millions of short-lived objects, and at CPython's default first
threshold (700) the collector runs thousands of times per model: measured on the HuBERT training
job (tests/models/test_corpus_speech.py), 5,268 collections took 7.6 s of its 82 s, and with the
threshold at 50,000, 244 collections took 2.8 s (the test 73 s). Only when the collector runs
changes: every cycle is still collected, and a test that needs a collection at a given point
calls ``gc.collect()``, as before. The product leaves the user's setting alone.
"""

from __future__ import annotations

import gc

FIRST_THRESHOLD = 50_000


def collect_less_often() -> None:
    """Raise the collector's first threshold to :data:`FIRST_THRESHOLD`; the older generations' stay."""
    _, second, third = gc.get_threshold()
    gc.set_threshold(FIRST_THRESHOLD, second, third)
