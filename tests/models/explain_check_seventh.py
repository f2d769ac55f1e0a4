"""``torch._dynamo.explain`` of one job of ``tests/models/corpus_seventh.py`` in a fresh process.

Usage: ``python -m tests.models.explain_check_seventh JOB``; prints the JSON line of
:mod:`tests.models.explain_check19` (graphs, graph breaks, break reasons by GB id, error).
"""

from __future__ import annotations

from tests.models.explain_check19 import main

if __name__ == "__main__":
    from tests.models.corpus_seventh import MEASURABLE

    main(MEASURABLE)
