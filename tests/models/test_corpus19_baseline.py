"""The baseline of the issue-19 corpus (``tests/models/corpus19.py``), written down exactly.

Each job's ``torch._dynamo.explain`` of one call, in a fresh process
(``tests/models/explain_check19.py``): graphs, graph breaks, and the break reasons by GB id, as
measured by hand on torch 2.13 with transformers 5.24 (``benchmarks/advisor_corpus.py``, the
"before" column of ``docs/corpus.md``). transformers 5.25.0 gives the same figures (every job checked exactly,
2026-12-03). On other versions the figures are not the same (Dynamo
renames and re-counts breaks between releases), so there the test checks that the job still
breaks. The fast jobs run by default; the others (tens of seconds each) are marked ``slow``.
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

import torch  # noqa: E402

from tests.models.corpus_checks import assert_baseline, baseline_jobs, explain_fresh  # noqa: E402

MEASURED_ON = torch.__version__.startswith("2.13.") and transformers.__version__ in ("5.24.0", "5.25.0")
"""Where the figures below were measured: torch 2.13 with transformers 5.24.0 or 5.25.0 (the same figures)."""

# job -> (graph_count, graph_break_count, {GB id: break reasons})
EXPECTED: dict[str, tuple[int, int, dict[str, int]]] = {
    "encodec_eval": (36, 35, {"-": 8, "GB0033": 2, "GB0170": 9}),  # "-": generic_jump, step_unsupported
    "mixtral_eval": (9, 8, {"GB0036": 3}),
    "mixtral_train": (9, 8, {"GB0036": 3}),
    "qwen2_moe_eval": (10, 9, {"GB0036": 3}),
    "qwen3_moe_eval": (9, 8, {"GB0036": 3}),
    "olmoe_eval": (9, 8, {"GB0036": 3}),
    "gpt_oss_eval": (11, 10, {"GB0036": 3}),
    "jetmoe_eval": (12, 11, {"GB0033": 5}),
    "granitemoe_eval": (9, 8, {"GB0036": 3}),
    "phimoe_eval": (8, 7, {"GB0036": 3}),
    "deepseek_v3_eval": (9, 8, {"GB0036": 3}),
    "llava_eval": (4, 3, {"GB0124": 2}),
    "paligemma_eval": (4, 3, {"GB0124": 2}),
    "qwen2_vl_eval": (25, 24, {"GB0033": 7, "GB0036": 1, "GB0124": 5}),
    "idefics2_eval": (9, 8, {"GB0033": 1, "GB0036": 2, "GB0124": 2}),
    "idefics3_eval": (9, 8, {"GB0033": 1, "GB0036": 2, "GB0124": 2}),
    "mra_eval": (6, 5, {"GB8985": 3}),
}
"""explain's ``graph_break_count`` counts every break; its ``break_reasons`` (the GB column) list
fewer, one per distinct reason and place: Dynamo's counter and the reasons are both recorded.
GB0036 (dynamic shape operator: ``nonzero`` in the experts loop), GB0033 (data-dependent operator:
``.item()``/``.tolist()``), GB0124 (``Tensor.item()`` without ``capture_scalar_outputs``), GB0170
(data-dependent branching), GB8985 (a ``requires_grad_()`` intermediate leaked as output)."""

FAST = frozenset({"mra_eval", "mixtral_eval", "llava_eval"})


def explain(job: str) -> dict:
    """``tests/models/explain_check19.py`` for the job, in a fresh process."""
    return explain_fresh("tests.models.explain_check19", job)


def test_every_job_of_corpus19_has_its_expectation_and_the_union_has_twenty_breaking_jobs():
    from tests.models.corpus import JOBS as OLD
    from tests.models.corpus19 import JOBS

    assert set(EXPECTED) == set(JOBS)
    assert not set(OLD) & set(JOBS)
    assert len(OLD) + len(JOBS) >= 20


@pytest.mark.parametrize("job", baseline_jobs(EXPECTED, FAST))
def test_baseline_breaks_as_measured(job):
    got = explain(job)
    assert_baseline(got, EXPECTED[job], MEASURED_ON)
