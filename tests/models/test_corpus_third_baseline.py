"""The baseline of the third held-out corpus (``tests/models/corpus_third.py``), written down exactly.

Each breaking job's ``torch._dynamo.explain`` of one call in a fresh process
(``python -m tests.models.explain_check_third JOB``), measured twice on torch 2.13 with
transformers 5.25.0 (2026-12-05), and committed before the advisor ran on any of them: their advisor
figures (``docs/corpus.md``) are held-out ones. Where each job breaks: ``docs/corpus-third-scan.md``.
The two fastest jobs (explain about 2-3 s) run here; ``NSTVIZ_ALL_BASELINES=1`` runs all 19.
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

import torch  # noqa: E402

from tests.models.corpus_checks import assert_baseline, baseline_jobs, explain_fresh  # noqa: E402

MEASURED_ON = torch.__version__.startswith("2.13.") and transformers.__version__ == "5.25.0"

# job -> (graph_count, graph_break_count, {GB id: break reasons}); GB ids as in test_corpus27_baseline
EXPECTED: dict[str, tuple[int, int, dict[str, int]]] = {
    "deformable_detr_det_train": (19, 18, {"-": 5, "GB0007": 2, "GB0124": 1, "GB0170": 3}),
    "rf_detr_seg_train": (20, 19, {"-": 4, "GB0116": 2, "GB0124": 1, "GB0170": 2}),
    "slanext_table_eval": (4, 3, {"GB0170": 1}),
    "radio_packed_eval": (11, 10, {"GB0033": 6, "GB0036": 2}),
    "lfm2_vl_eval": (14, 13, {"GB0033": 1, "GB0036": 1, "GB0124": 6}),
    "vjepa2_masked_eval": (6, 5, {"GB0033": 3}),
    "emu3_vq_eval": (7, 6, {"GB0033": 1, "GB0124": 4}),
    "blt_causal_lm_train": (6, 5, {"-": 1, "GB0036": 3}),
    "blt_causal_lm_eval": (6, 5, {"-": 1, "GB0036": 3}),
    "qwen2_audio_train": (6, 5, {"GB0036": 3, "GB0124": 1}),
    "qwen2_audio_eval": (4, 3, {"GB0036": 1, "GB0124": 1}),
    "evolla_protein_text_train": (10, 9, {"-": 2, "GB0170": 1}),
    "evolla_protein_text_eval": (9, 8, {"-": 1, "GB0170": 1}),
    "moshi_depth_train": (3, 2, {}),
    "moshi_depth_eval": (3, 2, {}),
    "qwen3_asr_train": (13, 12, {"GB0033": 2, "GB0036": 2, "GB0124": 3}),
    "qwen3_asr_eval": (13, 12, {"GB0033": 2, "GB0036": 2, "GB0124": 3}),
    "granite_speech_train": (9, 8, {"GB0036": 5}),
    "granite_speech_eval": (7, 6, {"GB0036": 3}),
}
FAST = ("radio_packed_eval", "vjepa2_masked_eval")


def test_the_third_corpus_is_new_families_only_and_every_breaking_job_is_written_down():
    from tests.models.corpus import JOBS as OLD
    from tests.models.corpus19 import MEASURABLE as OLD19
    from tests.models.corpus27 import MEASURABLE as OLD27
    from tests.models.corpus_fresh import MEASURABLE as FRESH
    from tests.models.corpus_heldout import MEASURABLE as HELDOUT
    from tests.models.corpus_third import JOBS, MEASURABLE, NEAR_COPIES, NOT_BREAKING

    assert set(EXPECTED) == set(JOBS) and sum(b for _, b, _ in EXPECTED.values()) == 151
    assert not (set(OLD) | set(OLD19) | set(OLD27) | set(FRESH) | set(HELDOUT)) & set(MEASURABLE)
    assert not set(JOBS) & (set(NEAR_COPIES) | set(NOT_BREAKING))


@pytest.mark.parametrize("job", baseline_jobs(EXPECTED, FAST))
def test_baseline_breaks_as_measured(job):
    assert_baseline(explain_fresh("tests.models.explain_check_third", job), EXPECTED[job], MEASURED_ON)
