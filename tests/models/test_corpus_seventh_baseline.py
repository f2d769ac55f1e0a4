"""The baseline of the seventh held-out corpus (``tests/models/corpus_seventh.py``), written down exactly.

Each breaking job's ``torch._dynamo.explain`` of one call in a fresh process
(``python -m tests.models.explain_check_seventh JOB``), measured twice on torch 2.13 with
transformers 5.25.0 (2026-12-05, after stop 49), and committed before the advisor ran on any of them: their advisor
figures (``docs/corpus.md``) are held-out ones. Where each job breaks: ``docs/corpus-seventh-scan.md``.
Two fast jobs run here; ``NSTVIZ_ALL_BASELINES=1`` runs all 10.
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

import torch  # noqa: E402

from tests.models.corpus_checks import assert_baseline, baseline_jobs, explain_fresh  # noqa: E402

MEASURED_ON = torch.__version__.startswith("2.13.") and transformers.__version__ == "5.25.0"

# job -> (graph_count, graph_break_count, {GB id: break reasons}); GB ids as in test_corpus27_baseline
EXPECTED: dict[str, tuple[int, int, dict[str, int]]] = {
    "trocr_ved_checkpointing_train": (5, 4, {"GB0291": 2}),
    "trocr_causal_lm_checkpointing_train": (3, 2, {"GB0291": 1}),
    "rag_sequence_train": (5, 4, {"-": 1, "GB0170": 2}),
    "rag_sequence_eval_loss": (5, 4, {"-": 1, "GB0170": 2}),
    "rag_token_train": (5, 4, {"-": 1, "GB0170": 2}),
    "rag_token_eval_loss": (5, 4, {"-": 1, "GB0170": 2}),
    "bert2bert_train": (2, 1, {"GB0007": 1}),
    "bert2bert_eval_loss": (2, 1, {"GB0007": 1}),
    "jev_train": (5, 4, {"-": 1, "GB0033": 1, "GB0036": 1, "GB0170": 1}),
    "jev_eval_loss": (5, 4, {"-": 1, "GB0033": 1, "GB0036": 1, "GB0170": 1}),
}
FAST = ("bert2bert_eval_loss", "trocr_causal_lm_checkpointing_train")


def test_the_seventh_corpus_is_new_families_only_and_every_breaking_job_is_written_down():
    from tests.models.corpus import JOBS as OLD
    from tests.models.corpus19 import MEASURABLE as OLD19
    from tests.models.corpus27 import MEASURABLE as OLD27
    from tests.models.corpus_fifth import MEASURABLE as FIFTH
    from tests.models.corpus_fourth import MEASURABLE as FOURTH
    from tests.models.corpus_fresh import MEASURABLE as FRESH
    from tests.models.corpus_heldout import MEASURABLE as HELDOUT
    from tests.models.corpus_seventh import JOBS, MEASURABLE, NEAR_COPIES, NOT_BREAKING
    from tests.models.corpus_sixth import MEASURABLE as SIXTH
    from tests.models.corpus_third import MEASURABLE as THIRD

    assert set(EXPECTED) == set(JOBS) and sum(b for _, b, _ in EXPECTED.values()) == 32
    assert not (set(OLD) | set(OLD19) | set(OLD27) | set(FRESH) | set(HELDOUT) | set(THIRD) | set(FOURTH) | set(FIFTH)
                | set(SIXTH)) & set(MEASURABLE)
    assert not set(JOBS) & (set(NEAR_COPIES) | set(NOT_BREAKING))


@pytest.mark.parametrize("job", baseline_jobs(EXPECTED, FAST))
def test_baseline_breaks_as_measured(job):
    assert_baseline(explain_fresh("tests.models.explain_check_seventh", job), EXPECTED[job], MEASURED_ON)
