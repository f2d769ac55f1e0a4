"""The advisor on real transformers jobs: mixture-of-experts routing (Switch Transformers, eval).

How the expected values were established, and the paste check: ``tests/models/corpus_checks.py``.
Issue 17: ``capture_dynamic_output_shape_ops`` was recommended for taking the distinct sites 5 -> 4
and Dynamo's counter to 0 (``breaks 5 -> 4``, ``graph breaks 10 -> 0``), while
``torch._dynamo.explain`` in a fresh process counts as many graphs with it pasted as without
(17 -> 17 with this config). What it does change is a frame Dynamo gave up on: the resume
function after ``modeling_switch_transformers.py:174`` failed on ``aten.nonzero`` at its start
and ran as Python; with the flag that code is traced (as many graphs, one frame fewer run eagerly).
Issue 19: a recommendation must lower explain's graph count, so that flag is no remedy. Switch's
experts are one module each (no batched switch in transformers): the eager loop is rewritten to
run every expert with the router's mask (``rewrites/dense_experts.py``), static shapes: 17 -> 5
graphs; what is left is Dynamo's ``ContextVar.reset`` in transformers' output capturing
(GB0088, "Observed exception") and the decoder stack called with None arguments.
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

from tests.models.corpus_checks import auto, check_paste, statuses  # noqa: E402

ST = "transformers.models.switch_transformers.modeling_switch_transformers."


@pytest.mark.slow
def test_switch_transformers_experts_run_every_expert_with_the_routers_mask():
    report = auto("switch_moe_eval")
    assert len(report.runs["baseline"].breaks) == 5
    assert statuses(report) == {
        ST + "SwitchTransformersExperts.forward": "skipped",  # its break is gone with the rewrite
        ST + "SwitchTransformersStack.forward": "failed",  # called with None arguments (GB0236)
        "rewrite: SwitchTransformersExperts.forward (experts-dense)": "improved",
        "adapter: " + ST + "SwitchTransformersStack.forward": "failed",
    }
    by = {c.function: c for c in report.candidates}
    dense = by["rewrite: SwitchTransformersExperts.forward (experts-dense)"]
    assert (dense.run, dense.breaks_before, dense.breaks_after, dense.outputs_match) == ("attempt-1", 5, 3, True)
    assert dense.error == "17 -> 5 graphs; outputs equal eager on 1 more input set of the same shapes"
    assert "'NoneType' object is not subscriptable" in by["adapter: " + ST + "SwitchTransformersStack.forward"].error
    rec = report.recommendation
    assert (rec.functions, rec.config, rec.graphs_before, rec.graphs_after, rec.outputs_match) == ((), (), 17, 5, True)
    assert "for expert_idx in [[_nstviz_e] for _nstviz_e in range(len(expert_mask))]:" in rec.code
    assert ".nonzero()" not in rec.code  # the hits are not computed at all
    assert (
        "\nmodeling_switch_transformers.SwitchTransformersExperts.forward.__code__ = forward.__code__  "
        "# keeps modeling_switch_transformers's globals; every caller sees it\n"
    ) in rec.code
    # the headline first says the experts' frame Dynamo skipped (a break inside their loop, GB7000)
    first = report.summary().splitlines()[0]
    assert first.startswith("Dynamo skipped the frame SwitchTransformersExperts.forward: a break inside a loop (GB7000), ")
    assert "5 breaks → 3, 17 graphs → 5, outputs match" in first
    check_paste(report, "switch_moe_eval")  # explain in fresh processes: 17 -> 5 graphs
