"""Property test in Chromium with the real viewer: ANY string in a Report shows as text.

Hypothesis draws batches of strings (any code point, lone surrogates and markup included);
each batch becomes the break reasons, code lines and file names of one Report, rendered by
the real viewer bundle. Every string must appear in the page exactly as written (lone
surrogates included: JS strings hold them, and the probe returns them escaped), and nothing
may execute or be fetched.
"""

from __future__ import annotations

import pytest
from hostile import any_text
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from page_probe import assert_inert

from nstviz.passes.assemble import build_report
from nstviz.render.html import save_html
from nstviz.report import Break, Location, Report, Run

pytestmark = pytest.mark.browser

_PAYLOADS = [
    "<img src=x onerror=window.__nstviz_pwned=1>",
    "</script><script>window.__nstviz_pwned=2</script>",
    "<svg onload=window.__nstviz_pwned=3>",
    "javascript:window.__nstviz_pwned=4",
]


def report_of(texts: list[str]) -> Report:
    breaks = tuple(
        Break(
            gb_id=None,
            reason=text,
            count=1,
            fatal=False,
            location=Location(file=f"/p/{i}.py", line=i + 1, function=f"f{i}", code=text),
            link=text,
        )
        for i, text in enumerate(texts)
    )
    return build_report(torch_version="2.13.0", runs={"baseline": Run(name="baseline", breaks=breaks)})


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.one_of(any_text.filter(lambda s: s.strip() != ""), st.sampled_from(_PAYLOADS)),
        min_size=1,
        max_size=25,
    )
)
def test_break_reasons_show_exactly_as_written(tmp_path_factory, probe_batch, texts):
    path = save_html(report_of(texts), tmp_path_factory.mktemp("prop") / "p.html")
    (obs,) = probe_batch([{"path": str(path), "text_of": [".nsv-break-reason"], "settle_ms": 100}])
    assert obs["ready"], obs["errors"]
    assert_inert(obs)
    assert obs["texts"][".nsv-break-reason"] == texts
