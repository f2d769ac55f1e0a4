"""The page's own machinery in Chromium, with a minimal stand-in viewer.

These tests pin what html.py itself guarantees (CSP hashes that let exactly our scripts run,
zero requests, the JSON download, the static text without JavaScript) independently of the
real viewer; ``test_hostile_real_run.py`` repeats the safety checks with the real bundle.
"""

from __future__ import annotations

import json

import pytest
from hostile import HOSTILE, report_with
from page_probe import assert_inert

from nstviz.render.html import ViewerAssets, extract_report_json, render_html

pytestmark = pytest.mark.browser

# Decodes the gzip+base64 data, renders every break reason as text and marks itself ready, like the
# real viewer must.
MINI_VIEWER = """
(async function () {
  var data = document.getElementById("nstviz-report");
  var bin = atob(data.textContent), bytes = new Uint8Array(bin.length);
  for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  var text = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
  var report = JSON.parse(text);
  var root = document.getElementById("nstviz-root");
  var list = document.createElement("ul");
  Object.keys(report.runs).forEach(function (name) {
    report.runs[name].breaks.forEach(function (b) {
      var li = document.createElement("li");
      li.className = "reason";
      li.textContent = b.reason;
      list.appendChild(li);
    });
  });
  root.appendChild(list);
  root.setAttribute("data-nstviz-ready", "1");
})();
"""
ASSETS = ViewerAssets(script=MINI_VIEWER, css=".reason { color: #333; }")


def write(tmp_path, name, report, assets=ASSETS):
    path = tmp_path / name
    path.write_bytes(render_html(report, assets=assets).encode("utf-8"))
    return path


def test_scripts_run_under_the_csp_and_hostile_text_is_inert(tmp_path, probe):
    pages = []
    for i, text in enumerate(HOSTILE[:-1]):
        pages.append(
            {
                "path": str(
                    write(
                        tmp_path,
                        f"h{i}.html",
                        report_with(text.replace("alert(1)", "window.__nstviz_pwned=1")),
                    )
                )
            }
        )
    for obs in probe(pages):
        assert obs["ready"], obs["errors"]
        assert_inert(obs)
        assert obs["scripts"] == 3


def test_text_shows_as_written(tmp_path, probe):
    text = "</script><img src=x onerror=window.__nstviz_pwned=1> javascript:x() ]]> <!-- & é"
    (obs,) = probe([{"path": str(write(tmp_path, "t.html", report_with(text)))}])
    assert_inert(obs)
    assert text in obs["text"]
    assert obs["title"] == "nstviz: " + text


def test_a_script_not_in_the_csp_is_blocked(tmp_path, probe):
    page = render_html(report_with("x"), assets=ASSETS)
    page = page.replace("</body>", "<script>window.__nstviz_pwned = 1</script></body>")
    path = tmp_path / "tampered.html"
    path.write_text(page, encoding="utf-8")
    (obs,) = probe([{"path": str(path)}])
    assert obs.get("pwned") is None
    assert [v["directive"] for v in obs["violations"]] == ["script-src-elem"]


def test_json_download_is_the_embedded_report(tmp_path, probe):
    report = report_with("<b>\u2028\ud800")
    (obs,) = probe([{"path": str(write(tmp_path, "d.html", report)), "download": True}])
    assert_inert(obs)
    assert obs["download_name"].endswith(".json")
    assert json.loads(obs["download_text"]) == json.loads(report.to_json())
    assert obs["download_text"] == extract_report_json(render_html(report, assets=ASSETS))


def test_without_javascript_the_header_and_summary_show(tmp_path, probe):
    report = report_with("<i>no js</i>")
    (obs,) = probe([{"path": str(write(tmp_path, "nojs.html", report)), "javascript": False}])
    assert obs["requests"] == []
    assert "The interactive view needs JavaScript" in obs["text"]
    assert "torch 2.13.0" in obs["text"]
    assert "<i>no js</i>" in obs["text"]  # the summary, as text
