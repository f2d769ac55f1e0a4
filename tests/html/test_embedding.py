"""Property tests of how the Report JSON is embedded in the standalone page (no browser)."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re

import pytest
from hostile import HOSTILE, any_text, report_with
from hypothesis import given, settings

from nstviz.errors import ReportFormatError
from nstviz.render.html import (
    REPORT_ENCODING,
    ViewerAssets,
    embed_json,
    extract_report_json,
    plain_report_json,
    render_html,
    report_json_for_html,
    report_text_for_html,
)
from nstviz.report import Report

ASSETS = ViewerAssets(script="document.title;", css="main{}")


def script_bodies(page: str) -> list[str]:
    return re.findall(r"<script[^>]*>(.*?)</script>", page, flags=re.DOTALL)


@settings(max_examples=300, deadline=None)
@given(any_text)
def test_any_string_round_trips_through_the_page(text: str) -> None:
    report = report_with(text)
    page = render_html(report, assets=ASSETS)
    page.encode("utf-8")  # always valid UTF-8, whatever the strings
    data = json.loads(extract_report_json(page))
    assert data == json.loads(report.to_json())
    assert Report.from_dict(data) == report


@settings(max_examples=300, deadline=None)
@given(any_text)
def test_embedded_json_has_no_markup_characters(text: str) -> None:
    embedded = embed_json(json.dumps({"k": text}, ensure_ascii=False))
    assert re.search("[<>&\u2028\u2029\ud800-\udfff]", embedded) is None
    assert json.loads(embedded) == {"k": text}


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_strings_stay_inside_the_data_element(text: str) -> None:
    page = render_html(report_with(text), assets=ASSETS)
    # Exactly the page's own four elements: the JSON, the boot script, the viewer.
    assert len(re.findall(r"<script", page, flags=re.IGNORECASE)) == 3
    assert len(re.findall(r"</script", page, flags=re.IGNORECASE)) == 3
    assert "<img" not in page.lower()
    assert "<!--" not in page
    bodies = script_bodies(page)
    assert re.fullmatch(r"[A-Za-z0-9+/=]*", bodies[0])  # gzip+base64: no character of the user's text
    assert json.loads(extract_report_json(page)) == json.loads(report_with(text).to_json())


def test_the_report_is_embedded_gzip_base64_and_old_pages_still_read() -> None:
    report = report_with("x")
    page = render_html(report, assets=ASSETS)
    assert f'<script type="application/gzip" id="nstviz-report" data-encoding="{REPORT_ENCODING}">' in page
    assert render_html(report, assets=ASSETS) == page  # deterministic: no timestamp in the gzip header
    text = extract_report_json(page)
    assert text == report_json_for_html(report)
    body = script_bodies(page)[0]
    assert gzip.decompress(base64.b64decode(body)).decode("utf-8") == text
    # a page written before (the JSON as text) reads the same
    old = re.sub(r'<script type="application/gzip"[^>]*>[^<]*</script>',
                 lambda _: f'<script type="application/json" id="nstviz-report">{text}</script>', page)
    assert extract_report_json(old) == text


MARKER = '"nodes":["\\u0000nstviz-part-0-0"]'


@settings(max_examples=200, deadline=None)
@given(any_text)
def test_a_report_in_parts_reads_back_character_for_character(text: str) -> None:
    report = report_with(text)
    plain = report_json_for_html(report)
    assert report_text_for_html(report) == plain  # small: one JSON text, as before
    parts = report_text_for_html(report, parts_over_chars=0, part_nodes=0)
    index, skeleton, *lines = parts.split("\n")
    runs = json.loads(plain)["runs"]
    markers = [f"nstviz-part-0-{k}" for k in range(len(runs))]
    if "nstviz-part-0-" in plain:  # the user's text holds the name: the markers take another
        markers = [m.replace("-0-", "-1-") for m in markers]
    assert json.loads(index) == [
        {"run": name, "graph": 0, "parts": 1, "marker": m} for name, m in zip(runs, markers, strict=True)
    ] and len(lines) == len(runs)
    assert MARKER in skeleton and [json.loads(line) for line in lines] == [runs[n]["graphs"][0]["nodes"] for n in runs]
    assert plain_report_json(parts) == plain
    assert report_json_for_html(report) == plain  # the Report is not changed by writing it in parts


@pytest.mark.parametrize("text", [MARKER, "\0nstviz-part-0-0", '["\u0000nstviz-part-0-0"]', "a\nb\n[1]"])
def test_user_text_that_looks_like_a_part_stays_text(text: str) -> None:
    report = report_with(text)
    page_text = report_text_for_html(report, parts_over_chars=0, part_nodes=0)
    assert plain_report_json(page_text) == report_json_for_html(report)
    assert Report.from_json(plain_report_json(page_text)) == report
    # the markers are names the Report's text does not hold
    assert all(entry["marker"] not in report_json_for_html(report) for entry in json.loads(page_text.split("\n")[0]))


def test_a_page_with_a_part_missing_is_a_clear_error() -> None:
    parts = report_text_for_html(report_with("x"), parts_over_chars=0, part_nodes=0)
    with pytest.raises(ReportFormatError, match="truncated: its index names 1 parts, it holds 0"):
        plain_report_json(parts.rsplit("\n", 1)[0])
    with pytest.raises(ReportFormatError, match="corrupted index of parts"):
        plain_report_json('[{"run":]\n{}')


@pytest.mark.parametrize("body", ["H4sI!!!", "H4sIAAAAAAAC", base64.b64encode(b"not gzip").decode()])
def test_corrupted_embedded_data_is_a_clear_error(body: str) -> None:
    from nstviz.errors import ReportFormatError

    page = render_html(report_with("x"), assets=ASSETS)
    broken = re.sub(r'(data-encoding="gzip\+base64">)[^<]*', lambda m: m.group(1) + body, page)
    with pytest.raises(ReportFormatError, match="corrupted or truncated"):
        extract_report_json(broken)


def test_markup_text_is_escaped() -> None:
    page = render_html(report_with('<b>bold</b> & "q" \ud800'), assets=ASSETS)
    head = page.split('<script type="application/gzip"', 1)[0]
    assert "<b>" not in head
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; &quot;q&quot; \ufffd" in head


def _hash(text: str) -> str:
    """The CSP source for ``text``, computed here (not with html.py's helper)."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def test_csp_allows_only_the_inlined_scripts_by_hash() -> None:
    page = render_html(report_with("x"), assets=ASSETS)
    csp = (
        re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
        .group(1)
        .replace("&#x27;", "'")
    )
    _, boot, viewer = script_bodies(page)  # the JSON data element, the page's own script, the bundle
    page_style, viewer_style = re.findall(r"<style>(.*?)</style>", page, re.DOTALL)
    assert (viewer, viewer_style) == ("document.title;", "main{}")
    assert csp == (
        "default-src 'none'; "
        f"script-src {_hash(boot)} 'sha256-AjuIg5Tn3MV3LRLRwhY80/A5c++3kFKV6QsMpsrS6Jw='; "
        f"style-src {_hash(page_style)} 'sha256-YHx2MVWqMzRWnMbihKQsXBPElHRc92/5D9vT2EbduqI='; "
        "img-src data: blob:; connect-src 'none'; base-uri 'none'; form-action 'none'; "
        "object-src 'none'; frame-src 'none'; manifest-src 'none'"
    )


def test_worker_allowed_only_when_the_bundle_starts_one() -> None:
    page = render_html(report_with("x"), assets=ViewerAssets(script="new Worker(u)", css=""))
    assert "worker-src blob:" in page


def test_bundle_cannot_close_its_own_element() -> None:
    assets = ViewerAssets(script='var s = "</script><b>";', css='a::after{content:"</style>"}')
    page = render_html(report_with("x"), assets=assets)
    assert 'var s = "<\\/script><b>";' in page
    assert 'content:"<\\/style>"' in page


def test_missing_bundle_names_the_fix(tmp_path) -> None:
    from nstviz.errors import NstvizError
    from nstviz.render.html import load_viewer_assets

    with pytest.raises(NstvizError, match=r"pip install -e \.|node js/build.mjs"):
        load_viewer_assets(tmp_path)


def test_extract_rejects_pages_without_a_report() -> None:
    from nstviz.errors import ReportFormatError

    with pytest.raises(ReportFormatError, match="no nstviz Report"):
        extract_report_json("<html><body>hello</body></html>")


def test_save_html_writes_utf8_bytes(tmp_path, monkeypatch) -> None:
    import nstviz.render.html as mod

    monkeypatch.setattr(mod, "load_viewer_assets", lambda directory=None: ASSETS)
    report = report_with("é \ud800 \u2028\r\n")
    target = report.save_html(tmp_path / "r.html")
    raw = (tmp_path / "r.html").read_bytes()
    assert target == str(tmp_path / "r.html")
    assert json.loads(extract_report_json(raw.decode("utf-8"))) == json.loads(report.to_json())
