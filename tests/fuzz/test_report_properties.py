"""Property tests over the Report model: JSON and HTML round trips, strings always shown as text."""

from __future__ import annotations

import html.parser
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nstviz.render.html import extract_report_json, render_html
from nstviz.report import Report
from tests.fuzz.strategies import reports, reports_with_non_finite, same_floats
from tests.html.hostile import HOSTILE

FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)


@FUZZ
@given(reports)
def test_generated_reports_validate_and_survive_json(report: Report) -> None:
    report.validate()
    text = report.to_json()
    text.encode("utf-8")  # writable as UTF-8 (lone surrogates escaped)
    assert Report.from_json(text) == report
    assert Report.from_json(report.to_json(indent=2)) == report
    assert Report.from_dict(report.to_dict()) == report


@settings(FUZZ, max_examples=30)
@given(reports_with_non_finite)
def test_non_finite_floats_survive_json(report: Report) -> None:
    text = report.to_json()
    assert "NaN" not in re.sub(r'"(?:[^"\\]|\\.)*"', "", text), "bare NaN/Infinity is not JSON"
    assert same_floats(Report.from_json(text), report)


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, tuple[str, ...]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, tuple(sorted(name for name, _ in attrs))))


def _markup(page: str) -> _Tags:
    parser = _Tags()
    parser.feed(page)
    return parser


_PAGE_SCRIPTS = 3
"""The page's own script elements: the Report JSON, the page's small script, the viewer bundle."""


@settings(FUZZ, max_examples=30)
@given(reports)
def test_html_round_trip_and_strings_are_text(report: Report) -> None:
    page = render_html(report)
    assert Report.from_json(extract_report_json(page)) == report
    tags = _markup(page).tags
    # Whatever the strings hold, the page has exactly its own scripts and no event handlers.
    assert sum(1 for tag, _ in tags if tag == "script") == _PAGE_SCRIPTS
    assert not [t for t in tags if t[0] in ("img", "iframe", "object", "embed", "base", "form", "svg")]
    assert not [t for t in tags if any(a.startswith("on") for a in t[1])]
    embedded = extract_report_json(page)
    assert "<" not in embedded and "\u2028" not in embedded and "\u2029" not in embedded


@pytest.mark.browser
@settings(max_examples=1, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_generated_reports_open_inert_in_chromium(data: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A few generated Reports (hostile titles) open in Chromium: nothing runs, the title is text."""
    from tests.html.conftest import probe_pages
    from tests.html.page_probe import assert_inert

    tmp = tmp_path_factory.mktemp("fuzz-pages")
    titles = [h for h in HOSTILE if h.isprintable() and len(h) < 100][:5]
    specs, shown = [], []
    for i, title in enumerate(titles):
        report = data.draw(reports)
        report = type(report)(**{**{f: getattr(report, f) for f in report.__dataclass_fields__}, "title": title})
        path = Path(tmp) / f"r{i}.html"
        report.save_html(path)
        specs.append({"path": str(path), "wait_ready": True, "timeout_ms": 20000})
        shown.append(title)
    for title, obs in zip(shown, probe_pages(Path(tmp), specs), strict=True):
        assert obs["ready"], obs["errors"]
        assert_inert(obs)
        assert title in obs["text"], f"title {title!r} is not shown as text"
