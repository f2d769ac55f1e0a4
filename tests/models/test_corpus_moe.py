"""The advisor on real transformers jobs: mixture-of-experts routing (Switch Transformers, eval).

How the expected values were established, and the paste check: ``tests/models/corpus_checks.py``.
Issue 17: ``capture_dynamic_output_shape_ops`` was recommended for taking the distinct sites 5 -> 4
and Dynamo's counter to 0 (``breaks 5 -> 4``, ``graph breaks 10 -> 0``), while
``torch._dynamo.explain`` in a fresh process counts as many graphs with it pasted as without
(17 -> 17 with this config). What it does change is a frame Dynamo gave up on: the resume
function after ``modeling_switch_transformers.py:174`` failed on ``aten.nonzero`` at its start
and ran as Python; with the flag that code is traced (as many graphs, one frame fewer run eagerly).
Issue 19: a recommendation must lower explain's graph count, so that is reported and not kept:
no recommendation. No source rewrite fits the router's ``nonzero`` either (no rewrite
candidate).
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

from tests.models.corpus_checks import auto, statuses  # noqa: E402

ST = "transformers.models.switch_transformers.modeling_switch_transformers."


@pytest.mark.slow
def test_switch_transformers_config_flag_that_keeps_17_graphs_is_reported_not_recommended():
    report = auto("switch_moe_eval")
    assert len(report.runs["baseline"].breaks) == 5
    cfg = {c.function: c for c in report.candidates}["config: capture_dynamic_output_shape_ops=True"]
    assert (cfg.status, cfg.error) == ("no_change", "1 fewer frame(s) run eagerly, but the same 17 graphs: not an improvement")
    assert statuses(report) == {
        ST + "SwitchTransformersExperts.forward": "failed",  # nonzero: a dynamic output shape (GB0251)
        ST + "SwitchTransformersStack.forward": "failed",
        "adapter: " + ST + "SwitchTransformersStack.forward": "failed",
        "config: capture_dynamic_output_shape_ops=True": "no_change",
    }
    assert report.recommendation is None
    assert report.summary().splitlines()[0] == "nothing was marked (baseline only), 5 breaks, 17 graphs, outputs match eager"
