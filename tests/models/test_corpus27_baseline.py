"""The baseline of the issue-27 corpus (``tests/models/corpus27.py``), written down exactly.

Each breaking job's ``torch._dynamo.explain`` of one call, in a fresh process
(``tests/models/explain_check27.py``): graphs, graph breaks, and the break reasons by GB id, as
measured by hand on torch 2.13 with transformers 5.24 (the "before" column of ``docs/corpus.md``'s
section on issue 27). transformers 5.25.0 gives the same figures (every job checked exactly,
2026-12-03). On other versions the figures are not the same (Dynamo renames and re-counts
breaks between releases), so there the test checks that the job still breaks. The fast jobs run by
default; the others (20-75 s each on a loaded machine) are marked ``slow``. The detection and
segmentation jobs need scipy (their losses' Hungarian matcher) and the detection ones Pillow too
(transformers imports its box helpers only with it); without them they are skipped.
"""

from __future__ import annotations

import importlib.util

import pytest

transformers = pytest.importorskip("transformers")

import torch  # noqa: E402

from tests.models.corpus_checks import assert_baseline, baseline_jobs, explain_fresh  # noqa: E402

MEASURED_ON = torch.__version__.startswith("2.13.") and transformers.__version__ in ("5.24.0", "5.25.0")
"""Where the figures below were measured: torch 2.13 with transformers 5.24.0 or 5.25.0 (the same figures)."""

# job -> (graph_count, graph_break_count, {GB id: break reasons})
EXPECTED: dict[str, tuple[int, int, dict[str, int]]] = {
    "detr_train": (20, 19, {"-": 5, "GB0116": 2, "GB0124": 1, "GB0170": 4}),
    "maskformer_train": (9, 8, {"GB0007": 1, "GB0225": 2}),
    "mask2former_train": (17, 16, {"-": 1, "GB0007": 1, "GB0170": 3}),
    "superpoint_eval": (8, 7, {"GB0036": 6}),
    "lightglue_eval": (25, 24, {"GB0036": 9, "GB0170": 1}),
    "clap_audio_fusion_eval": (3, 2, {"GB0036": 1}),
    "whisper_train": (5, 4, {"GB0033": 2}),
    "sew_train": (10, 9, {"-": 1, "GB0033": 2, "GB0036": 2, "GB0206": 1, "GB0208": 1}),
    "unispeech_train": (10, 9, {"-": 1, "GB0033": 2, "GB0036": 2, "GB0206": 1, "GB0208": 1}),
    "autoformer_train": (13, 12, {"GB0033": 5}),
    "prophetnet_eval": (2, 1, {"GB0124": 1}),
    "xlm_eval": (5, 4, {"GB0124": 2}),
    # held out (corpus27.HELD_OUT)
    "yolos_train": (16, 15, {"-": 4, "GB0116": 2, "GB0124": 1, "GB0170": 3}),
    "superglue_eval": (10, 9, {"GB0036": 7}),
    "videomae_pretrain": (7, 6, {"GB0036": 4}),
}
"""explain's ``graph_break_count`` counts every break; its ``break_reasons`` (the GB column) list
fewer, one per distinct reason and place. GB0036 (dynamic shape operator: ``nonzero``, boolean-mask
indexing), GB0033 (data-dependent operator: ``.item()``/``.tolist()``), GB0124 (``Tensor.item()``
without ``capture_scalar_outputs``), GB0170 (data-dependent branching), GB0116 (an object Dynamo
cannot construct), GB0007 (a call into C: scipy's ``linear_sum_assignment``), GB0225 (a builtin
called on an unsupported type), GB0206 / GB0208 (tensor attribute writes), "-": a reason with no GB id
(``generic_jump``, ``step_unsupported``)."""

FAST = frozenset({"superpoint_eval", "xlm_eval", "whisper_train"})
NEEDS: dict[str, tuple[str, ...]] = {
    "detr_train": ("scipy", "PIL"), "yolos_train": ("scipy", "PIL"),
    "maskformer_train": ("scipy",), "mask2former_train": ("scipy",),
}


def explain(job: str) -> dict:
    """``tests/models/explain_check27.py`` for the job, in a fresh process.

    Forked from the per-worker server of :mod:`tests.helpers.fresh` (torch and transformers
    imported, nothing compiled or run), as for corpus19: not a new interpreter per job.
    """
    return explain_fresh("tests.models.explain_check27", job)


def test_corpus27_has_ten_breaking_jobs_none_of_the_old_corpora_and_three_held_out():
    from tests.models.corpus import JOBS as OLD
    from tests.models.corpus19 import MEASURABLE as OLD19
    from tests.models.corpus27 import BREAKING, HELD_OUT, JOBS, MEASURABLE, NOT_BREAKING

    assert set(EXPECTED) == set(BREAKING)
    assert not (set(OLD) | set(OLD19)) & set(MEASURABLE)
    assert len(BREAKING) >= 10 and len(HELD_OUT) == 3
    assert not set(JOBS) & {j.name for j in HELD_OUT}
    assert not set(BREAKING) & {j.name for j in NOT_BREAKING}
    assert set(MEASURABLE) == set(BREAKING) | {j.name for j in NOT_BREAKING}


@pytest.mark.parametrize("job", baseline_jobs(EXPECTED, FAST))
def test_baseline_breaks_as_measured(job):
    for module in NEEDS.get(job, ()):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{job} needs {module}")
    got = explain(job)
    assert_baseline(got, EXPECTED[job], MEASURED_ON)
