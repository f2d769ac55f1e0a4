"""The baseline of the fourth held-out corpus (``tests/models/corpus_fourth.py``), written down exactly.

Each breaking job's ``torch._dynamo.explain`` of one call in a fresh process
(``python -m tests.models.explain_check_fourth JOB``), measured twice on torch 2.13 with
transformers 5.25.0 (2026-12-05), and committed before the advisor ran on any of them: their advisor
figures (``docs/corpus.md``) are held-out ones. Where each job breaks: ``docs/corpus-fourth-scan.md``.
The two fastest jobs (explain about 6-9 s) run here; ``NSTVIZ_ALL_BASELINES=1`` runs all 11.
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

import torch  # noqa: E402

from tests.models.corpus_checks import assert_baseline, baseline_jobs, explain_fresh  # noqa: E402

MEASURED_ON = torch.__version__.startswith("2.13.") and transformers.__version__ == "5.25.0"

# job -> (graph_count, graph_break_count, {GB id: break reasons}); GB ids as in test_corpus27_baseline
EXPECTED: dict[str, tuple[int, int, dict[str, int]]] = {
    "hunyuan_vl_train": (18, 17, {"GB0033": 6, "GB0036": 3}),
    "hunyuan_vl_eval": (18, 17, {"GB0033": 6, "GB0036": 3}),
    "sam3_text_seg_eval": (10, 9, {"GB0033": 1}),
    "minicpmv4_6_train": (29, 28, {"GB0033": 12, "GB0036": 2, "GB0124": 1}),
    "minicpmv4_6_eval": (29, 28, {"GB0033": 12, "GB0036": 2, "GB0124": 1}),
    "ibert_quant_mlm_train": (50, 49, {"-": 7, "GB0170": 12, "GB0294": 19}),
    "ibert_quant_mlm_eval": (44, 43, {"GB0294": 33}),
    "seamless_m4t_v2_t2u_train": (7, 6, {"GB0036": 5}),
    "seamless_m4t_v2_t2u_eval": (7, 6, {"GB0036": 5}),
    "moss_transcribe_diarize_train": (7, 6, {"GB0036": 3}),
    "moss_transcribe_diarize_eval": (7, 6, {"GB0036": 3}),
}
FAST = ("hunyuan_vl_eval", "seamless_m4t_v2_t2u_eval")


def test_the_fourth_corpus_is_new_families_only_and_every_breaking_job_is_written_down():
    from tests.models.corpus import JOBS as OLD
    from tests.models.corpus19 import MEASURABLE as OLD19
    from tests.models.corpus27 import MEASURABLE as OLD27
    from tests.models.corpus_fourth import JOBS, MEASURABLE, NEAR_COPIES, NOT_BREAKING
    from tests.models.corpus_fresh import MEASURABLE as FRESH
    from tests.models.corpus_heldout import MEASURABLE as HELDOUT
    from tests.models.corpus_third import MEASURABLE as THIRD

    assert set(EXPECTED) == set(JOBS) and sum(b for _, b, _ in EXPECTED.values()) == 215
    assert not (set(OLD) | set(OLD19) | set(OLD27) | set(FRESH) | set(HELDOUT) | set(THIRD)) & set(MEASURABLE)
    assert not set(JOBS) & (set(NEAR_COPIES) | set(NOT_BREAKING))


@pytest.mark.parametrize("job", baseline_jobs(EXPECTED, FAST))
def test_baseline_breaks_as_measured(job):
    assert_baseline(explain_fresh("tests.models.explain_check_fourth", job), EXPECTED[job], MEASURED_ON)
