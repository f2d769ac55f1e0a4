"""The baseline of the second held-out corpus (``tests/models/corpus_heldout.py``), written down exactly.

Each breaking job's ``torch._dynamo.explain`` of one call in a fresh process
(``python -m tests.models.explain_check_heldout JOB``), measured twice on torch 2.13 with
transformers 5.25.0 (2026-12-04), before the advisor ran on any of them: their advisor figures
(``docs/corpus.md``) are held-out ones. Where each job breaks: ``docs/corpus-heldout-scan.md``.
The two fastest jobs (explain about 2 s) run here; ``NSTVIZ_ALL_BASELINES=1`` runs all 23.
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

import torch  # noqa: E402

from tests.models.corpus_checks import assert_baseline, baseline_jobs, explain_fresh  # noqa: E402

MEASURED_ON = torch.__version__.startswith("2.13.") and transformers.__version__ == "5.25.0"

# job -> (graph_count, graph_break_count, {GB id: break reasons}); GB ids as in test_corpus27_baseline
EXPECTED: dict[str, tuple[int, int, dict[str, int]]] = {
    "llava_next_anyres_eval": (8, 7, {"GB0033": 3, "GB0124": 2}),
    "mistral3_pixtral_eval": (17, 16, {"GB0033": 4, "GB0124": 4, "GB0156": 2}),
    "phi4mm_vision_train": (5, 4, {"-": 2, "GB0170": 1}),
    "phi4mm_vision_eval": (5, 4, {"-": 2, "GB0170": 1}),
    "d_fine_det_train": (76, 75, {"-": 6, "GB0036": 12, "GB0116": 1, "GB0124": 4, "GB0170": 8}),
    "lw_detr_det_train": (15, 14, {"-": 4, "GB0116": 2, "GB0124": 1, "GB0170": 2}),
    "oneformer_seg_train": (22, 21, {"-": 1, "GB0036": 3, "GB0124": 4}),
    "oneformer_seg_eval": (15, 14, {"GB0036": 3, "GB0124": 4}),
    "eomt_seg_train": (12, 11, {"-": 1}),
    "eomt_seg_eval": (5, 4, {"-": 1}),
    "hiera_pretrain_train": (8, 7, {"GB0036": 5}),
    "xmod_lang_mlm_train": (8, 7, {"GB0036": 3}),
    "xmod_lang_mlm_eval": (8, 7, {"GB0036": 3}),
    "fsmt_translate_train": (4, 3, {"-": 1}),
    "fsmt_translate_eval": (4, 3, {"-": 1}),
    "musicgen_decoder_train": (3, 2, {}),
    "deberta_v1_cls_train": (14, 13, {"-": 1, "GB0036": 1, "GB0124": 2}),
    "deberta_v1_mlm_eval": (13, 12, {"-": 1, "GB0124": 2}),
    "bros_spade_ee_train": (2, 1, {}),
    "higgs_audio_v2_train": (15, 14, {"GB0007": 2, "GB0036": 8}),
    "higgs_audio_v2_eval": (14, 13, {"GB0007": 2, "GB0036": 7}),
    "pocket_tts_train": (15, 14, {"GB0036": 7, "GB0055": 2, "GB0124": 3, "GB4841": 1}),
    "pocket_tts_eval": (15, 14, {"GB0036": 6, "GB0124": 2, "GB9186": 3}),
}
FAST = ("fsmt_translate_eval", "eomt_seg_eval")


def test_the_heldout_corpus_is_new_families_only_and_every_breaking_job_is_written_down():
    from tests.models.corpus import JOBS as OLD
    from tests.models.corpus19 import MEASURABLE as OLD19
    from tests.models.corpus27 import MEASURABLE as OLD27
    from tests.models.corpus_fresh import MEASURABLE as FRESH
    from tests.models.corpus_heldout import JOBS, MEASURABLE, NEAR_COPIES, NOT_BREAKING

    assert set(EXPECTED) == set(JOBS) and sum(b for _, b, _ in EXPECTED.values()) == 280
    assert not (set(OLD) | set(OLD19) | set(OLD27) | set(FRESH)) & set(MEASURABLE)
    assert not set(JOBS) & (set(NEAR_COPIES) | set(NOT_BREAKING))


@pytest.mark.parametrize("job", baseline_jobs(EXPECTED, FAST))
def test_baseline_breaks_as_measured(job):
    assert_baseline(explain_fresh("tests.models.explain_check_heldout", job), EXPECTED[job], MEASURED_ON)
