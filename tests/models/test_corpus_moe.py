"""The advisor on real transformers jobs: mixture-of-experts routing (Switch Transformers, eval).

How the expected values were established, and the paste check: ``tests/models/corpus_checks.py``.
Issue 17: ``capture_dynamic_output_shape_ops`` was recommended for taking the distinct sites 5 -> 4
and Dynamo's counter to 0 (``breaks 5 -> 4``, ``graph breaks 10 -> 0``), while
``torch._dynamo.explain`` in a fresh process counts as many graphs with it pasted as without
(17 -> 17 with this config). What it does change is a frame Dynamo gave up on: the resume
function after ``modeling_switch_transformers.py:174`` failed on ``aten.nonzero`` at its start
and ran as Python; with the flag that code is traced. That is an improvement by nstviz's rule
(as many graphs, one frame fewer run eagerly), said as such, not as fewer breaks.
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

from tests.models.corpus_checks import auto, check_paste, statuses  # noqa: E402

ST = "transformers.models.switch_transformers.modeling_switch_transformers."


@pytest.mark.slow
def test_switch_transformers_config_flag_is_kept_for_the_frame_it_compiles_not_for_the_sites():
    report = auto("switch_moe_eval")
    assert len(report.runs["baseline"].breaks) == 5
    cfg = {c.function: c for c in report.candidates}["config: capture_dynamic_output_shape_ops=True"]
    assert (cfg.status, cfg.error) == ("improved", "1 fewer frame(s) run eagerly (same 17 graphs)")
    assert statuses(report) == {
        ST + "SwitchTransformersExperts.forward": "failed",  # nonzero: a dynamic output shape (GB0251)
        ST + "SwitchTransformersStack.forward": "failed",
        "adapter: " + ST + "SwitchTransformersStack.forward": "failed",
        "config: capture_dynamic_output_shape_ops=True": "improved",
    }
    rec = report.recommendation
    assert (rec.functions, rec.config, rec.outputs_match) == ((), ("capture_dynamic_output_shape_ops",), True)
    assert (rec.graphs_before, rec.graphs_after, rec.eager_frames_before, rec.eager_frames_after) == (17, 17, 8, 7)
    assert "(graphs 17 -> 17, frames run eagerly 8 -> 7, breaks 5 -> 4, graph breaks 10 -> 0)" in report.summary()
    chips = [(c.text, c.tone) for c in report.headline.chips]
    assert ("17 graphs → 17", "neutral") in chips and ("1 fewer frame(s) run eagerly (same 17 graphs)", "good") in chips
    # pasted in fresh processes: nstviz's capture as the advisor measured; explain 17 -> 17 graphs
    check_paste(report, "switch_moe_eval")
