"""The baseline of the fifth held-out corpus (``tests/models/corpus_fifth.py``), written down exactly.

Each breaking job's ``torch._dynamo.explain`` of one call in a fresh process
(``python -m tests.models.explain_check_fifth JOB``), measured twice on torch 2.13 with
transformers 5.25.0 (2026-12-05, after stop 47), and committed before the advisor ran on any of them: their advisor
figures (``docs/corpus.md``) are held-out ones. Where each job breaks: ``docs/corpus-fifth-scan.md``.
Two fast jobs run here; ``NSTVIZ_ALL_BASELINES=1`` runs all 11.
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

import torch  # noqa: E402

from tests.models.corpus_checks import assert_baseline, baseline_jobs, explain_fresh  # noqa: E402

MEASURED_ON = torch.__version__.startswith("2.13.") and transformers.__version__ == "5.25.0"

# job -> (graph_count, graph_break_count, {GB id: break reasons}); GB ids as in test_corpus27_baseline
EXPECTED: dict[str, tuple[int, int, dict[str, int]]] = {
    "gemma4_vlm_train": (8, 7, {"GB0033": 1, "GB0036": 3}),
    "gemma4_vlm_eval": (8, 7, {"GB0033": 1, "GB0036": 3}),
    "granite_docling_train": (15, 14, {"GB0033": 1, "GB0036": 4, "GB0124": 2}),
    "granite_docling_eval": (15, 14, {"GB0033": 1, "GB0036": 4, "GB0124": 2}),
    "glpn_depth_train": (4, 3, {"GB0036": 3}),
    "qwen2_5_omni_thinker_audio_train": (20, 19, {"GB0033": 6, "GB0036": 5, "GB0124": 1}),
    "qwen2_5_omni_thinker_audio_eval": (20, 19, {"GB0033": 6, "GB0036": 5, "GB0124": 1}),
    "vibevoice_asr_train": (4, 3, {"GB0036": 2}),
    "vibevoice_asr_eval": (4, 3, {"GB0036": 2}),
    "musicflamingo_train": (11, 10, {"GB0036": 6, "GB0124": 1}),
    "musicflamingo_eval": (11, 10, {"GB0036": 6, "GB0124": 1}),
}
FAST = ("glpn_depth_train", "granite_docling_eval")


def test_the_fifth_corpus_is_new_families_only_and_every_breaking_job_is_written_down():
    from tests.models.corpus import JOBS as OLD
    from tests.models.corpus19 import MEASURABLE as OLD19
    from tests.models.corpus27 import MEASURABLE as OLD27
    from tests.models.corpus_fifth import JOBS, MEASURABLE, NEAR_COPIES, NOT_BREAKING
    from tests.models.corpus_fourth import MEASURABLE as FOURTH
    from tests.models.corpus_fresh import MEASURABLE as FRESH
    from tests.models.corpus_heldout import MEASURABLE as HELDOUT
    from tests.models.corpus_third import MEASURABLE as THIRD

    assert set(EXPECTED) == set(JOBS) and sum(b for _, b, _ in EXPECTED.values()) == 109
    assert not (set(OLD) | set(OLD19) | set(OLD27) | set(FRESH) | set(HELDOUT) | set(THIRD) | set(FOURTH)) & set(MEASURABLE)
    assert not set(JOBS) & (set(NEAR_COPIES) | set(NOT_BREAKING))


@pytest.mark.parametrize("job", baseline_jobs(EXPECTED, FAST))
def test_baseline_breaks_as_measured(job):
    assert_baseline(explain_fresh("tests.models.explain_check_fifth", job), EXPECTED[job], MEASURED_ON)
