"""The baseline of the held-out corpus (``tests/models/corpus_fresh.py``), written down exactly.

Each breaking job's ``torch._dynamo.explain`` of one call in a fresh process
(``python -m tests.models.explain_check_fresh JOB``), measured on torch 2.13 with transformers
5.25.0 (2026-12-04). The jobs were chosen, built and measured before the advisor ran on any of
them, and after every remedy was built: their advisor figures (``docs/corpus.md``) are the
held-out ones. The fastest job (explain 3 s, two kinds of break) runs here; the others (up to 50 s
each) would add minutes to every test run for figures that only change with torch or
transformers: check them by hand with the command above.
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

import torch  # noqa: E402

from tests.models.corpus_checks import assert_baseline, baseline_jobs, explain_fresh  # noqa: E402

MEASURED_ON = torch.__version__.startswith("2.13.") and transformers.__version__ == "5.25.0"

# job -> (graph_count, graph_break_count, {GB id: break reasons}); GB ids as in test_corpus27_baseline
EXPECTED: dict[str, tuple[int, int, dict[str, int]]] = {
    "rt_detr_train": (26, 25, {"-": 5, "GB0036": 2, "GB0116": 1, "GB0124": 1, "GB0170": 4}),
    "grounding_dino_train": (37, 36, {"-": 6, "GB0007": 2, "GB0036": 2, "GB0124": 8, "GB0170": 4}),
    "omdet_turbo_eval": (5, 4, {"GB0036": 4}),
    "vilt_vqa_eval": (11, 10, {"GB0033": 3, "GB0036": 5}),
    "vilt_vqa_train": (11, 10, {"GB0033": 3, "GB0036": 5}),
    "splinter_pretrain_eval": (4, 3, {"GB0033": 1, "GB0036": 1}),
    "idefics_eval": (4, 3, {"GB0036": 1}),
    "idefics_train": (4, 3, {"GB0036": 1}),
    "fuyu_eval": (4, 3, {"GB0124": 2}),
    "chameleon_eval": (4, 3, {"GB0124": 2}),
    "plbart_cls_eval": (2, 1, {"GB0036": 1}),
    "seamless_m4t_s2tt_train": (9, 8, {"GB0170": 2}),
    "flava_pretrain": (10, 9, {"GB0036": 9}),
    "csm_train": (4, 3, {"GB0036": 3}),
}
FAST = ("splinter_pretrain_eval",)


def test_the_fresh_corpus_is_new_families_only_and_every_breaking_job_is_written_down():
    from tests.models.corpus import JOBS as OLD
    from tests.models.corpus19 import MEASURABLE as OLD19
    from tests.models.corpus27 import MEASURABLE as OLD27
    from tests.models.corpus_fresh import JOBS, MEASURABLE, NEAR_COPIES, NOT_BREAKING

    assert set(EXPECTED) == set(JOBS) and sum(b for _, b, _ in EXPECTED.values()) == 121
    assert not (set(OLD) | set(OLD19) | set(OLD27)) & set(MEASURABLE)
    assert not set(JOBS) & (set(NEAR_COPIES) | set(NOT_BREAKING))


@pytest.mark.parametrize("job", baseline_jobs(EXPECTED, FAST))
def test_baseline_breaks_as_measured(job):
    assert_baseline(explain_fresh("tests.models.explain_check_fresh", job), EXPECTED[job], MEASURED_ON)
