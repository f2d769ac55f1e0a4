"""The baseline of the sixth held-out corpus (``tests/models/corpus_sixth.py``), written down exactly.

Each breaking job's ``torch._dynamo.explain`` of one call in a fresh process
(``python -m tests.models.explain_check_sixth JOB``), measured twice on torch 2.13 with
transformers 5.25.0 (2026-12-05, after stop 48), and committed before the advisor ran on any of them: their advisor
figures (``docs/corpus.md``) are held-out ones. Where each job breaks: ``docs/corpus-sixth-scan.md``.
Two fast jobs run here; ``NSTVIZ_ALL_BASELINES=1`` runs all 12.
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

import torch  # noqa: E402

from tests.models.corpus_checks import assert_baseline, baseline_jobs, explain_fresh  # noqa: E402

MEASURED_ON = torch.__version__.startswith("2.13.") and transformers.__version__ == "5.25.0"

# job -> (graph_count, graph_break_count, {GB id: break reasons}); GB ids as in test_corpus27_baseline
EXPECTED: dict[str, tuple[int, int, dict[str, int]]] = {
    "visual_bert_pretrain_train": (6, 5, {"-": 1, "GB0170": 1, "GB0291": 1}),
    "visual_bert_pretrain_eval": (6, 5, {"-": 1, "GB0170": 1, "GB0291": 1}),
    "colqwen2_retrieval_eval": (14, 13, {"GB0033": 4, "GB0036": 2}),
    "nemotron_h_omni_video_train": (11, 10, {"-": 1, "GB0036": 3, "GB0124": 2, "GB0291": 1}),
    "nemotron_h_omni_video_eval": (10, 9, {"GB0036": 3, "GB0124": 2, "GB0291": 1}),
    "apertus1p5_audio_train": (30, 29, {"-": 6, "GB0124": 2, "GB0170": 5}),
    "apertus1p5_audio_eval": (30, 29, {"-": 6, "GB0124": 2, "GB0170": 5}),
    "gemma4_assistant_eval": (4, 3, {"GB0124": 2}),
    "nemotron_h_omni_audio_train": (7, 6, {"-": 1, "GB0036": 2, "GB0124": 2}),
    "nemotron_h_omni_audio_eval": (6, 5, {"GB0036": 2, "GB0124": 2}),
    "voxtral_realtime_train": (3, 2, {"GB0291": 1}),
    "voxtral_realtime_eval": (3, 2, {"GB0291": 1}),
}
FAST = ("voxtral_realtime_eval", "visual_bert_pretrain_eval")


def test_the_sixth_corpus_is_new_families_only_and_every_breaking_job_is_written_down():
    from tests.models.corpus import JOBS as OLD
    from tests.models.corpus19 import MEASURABLE as OLD19
    from tests.models.corpus27 import MEASURABLE as OLD27
    from tests.models.corpus_fifth import MEASURABLE as FIFTH
    from tests.models.corpus_fourth import MEASURABLE as FOURTH
    from tests.models.corpus_fresh import MEASURABLE as FRESH
    from tests.models.corpus_heldout import MEASURABLE as HELDOUT
    from tests.models.corpus_sixth import JOBS, MEASURABLE, NEAR_COPIES, NOT_BREAKING
    from tests.models.corpus_third import MEASURABLE as THIRD

    assert set(EXPECTED) == set(JOBS) and sum(b for _, b, _ in EXPECTED.values()) == 118
    assert not (set(OLD) | set(OLD19) | set(OLD27) | set(FRESH) | set(HELDOUT) | set(THIRD) | set(FOURTH) | set(FIFTH)) & set(MEASURABLE)
    assert not set(JOBS) & (set(NEAR_COPIES) | set(NOT_BREAKING))


@pytest.mark.parametrize("job", baseline_jobs(EXPECTED, FAST))
def test_baseline_breaks_as_measured(job):
    assert_baseline(explain_fresh("tests.models.explain_check_sixth", job), EXPECTED[job], MEASURED_ON)
