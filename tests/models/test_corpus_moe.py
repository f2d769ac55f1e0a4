"""The advisor on real transformers jobs: mixture-of-experts routing (Switch Transformers, eval).

How the expected values were established, and the paste check: ``tests/models/corpus_checks.py``.
Issue 17: ``capture_dynamic_output_shape_ops`` took the distinct sites 5 -> 4 and Dynamo's
counter to 0, and was recommended as an improvement; ``torch._dynamo.explain`` in a fresh process
counts as many graphs with it pasted as without (17 -> 17 with this config). It is ``no_change``.
"""

from __future__ import annotations

import pytest

transformers = pytest.importorskip("transformers")

from tests.models.corpus_checks import auto, explain, statuses  # noqa: E402

ST = "transformers.models.switch_transformers.modeling_switch_transformers."
FLAG = "import torch\ntorch._dynamo.config.capture_dynamic_output_shape_ops = True\n"


@pytest.mark.slow
def test_switch_transformers_config_flag_that_keeps_the_graphs_is_not_recommended():
    report = auto("switch_moe_eval")
    assert len(report.runs["baseline"].breaks) == 5
    cfg = {c.function: c for c in report.candidates}["config: capture_dynamic_output_shape_ops=True"]
    assert cfg.status == "no_change", (cfg.status, cfg.error, report.recommendation)
    assert statuses(report) == {
        ST + "SwitchTransformersExperts.forward": "failed",  # nonzero: a dynamic output shape (GB0251)
        ST + "SwitchTransformersStack.forward": "failed",
        "adapter: " + ST + "SwitchTransformersStack.forward": "failed",
        "config: capture_dynamic_output_shape_ops=True": "no_change",
    }
    assert "same 17 graphs" in cfg.error or "(17 -> 17 graphs" in cfg.error, cfg.error
    assert report.recommendation is None
    assert "→" not in report.headline.text and "17 graphs" in report.headline.text
    # what was recommended before, pasted in fresh processes: explain counts the same graphs
    before, after = explain("switch_moe_eval"), explain("switch_moe_eval", FLAG)
    assert before["graph_count"] == after["graph_count"] == 17
