"""Corrupted and newer-schema Reports: a clear error in Report.from_json, `nstviz view`, and the page.

The page check opens standalone HTML files in Debian's Chromium (through the HTML tests' page
probe) and requires the viewer's own error screen, never a half-rendered view.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from nstviz.errors import ReportFormatError
from nstviz.render.html import REPORT_ELEMENT_ID
from nstviz.report import SCHEMA_VERSION, Report
from tests.jupyter.conftest import make_report


def _valid() -> dict[str, Any]:
    return make_report().to_dict()


def _with(path: str, value: Any) -> str:
    """The valid Report's JSON with one field (dotted path, list indices as numbers) replaced."""
    data = _valid()
    *parents, last = path.split(".")
    node: Any = data
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if value is _DELETE:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return json.dumps(data)


_DELETE = object()
_VALID_TEXT = json.dumps(_valid())

# (case, JSON text, regex the ReportFormatError must match)
CORRUPT: list[tuple[str, str | bytes, str]] = [
    ("empty", "", r"not valid JSON"),
    ("truncated", _VALID_TEXT[: len(_VALID_TEXT) // 2], r"not valid JSON"),
    ("not JSON", "<html>hello</html>", r"not valid JSON"),
    ("invalid UTF-8", b'{"schema_version": 1, "x": "\xff\xfe"}', r"not valid JSON"),
    ("a list", "[1, 2, 3]", r"must be a JSON object, got list"),
    ("no schema_version", _with("schema_version", _DELETE), r"no integer 'schema_version'"),
    ("schema_version a string", _with("schema_version", "1"), r"no integer 'schema_version'"),
    ("newer schema", _with("schema_version", SCHEMA_VERSION + 1), rf"schema_version {SCHEMA_VERSION + 1}, newer than this nstviz understands \({SCHEMA_VERSION}\); upgrade nstviz"),
    ("no runs", _with("runs", _DELETE), r"missing required field 'runs' of Report"),
    ("runs a list", _with("runs", []), r"\$\.runs: expected an object"),
    ("node without name", _with("runs.baseline.graphs.0.nodes.0.name", _DELETE), r"\$\.runs\.baseline\.graphs\[0\]\.nodes\[0\]: missing required field 'name'"),
    ("unknown level", _with("runs.baseline.graphs.0.level", "quantum"), r"\$\.runs\.baseline\.graphs\[0\]\.level: 'quantum' is not one of"),
    ("count a string", _with("runs.baseline.breaks.0.count", "1"), r"\$\.runs\.baseline\.breaks\[0\]\.count: expected int"),
    ("count a bool", _with("runs.baseline.breaks.0.count", True), r"expected int, got True"),
    ("inputs a string", _with("runs.nonstrict.graphs.1.nodes.1.inputs", "arg0_1"), r"nodes\[1\]\.inputs: expected a list"),
    ("float garbage", _with("outputs.max_abs_diff", "lots"), r"\$\.outputs\.max_abs_diff"),
]


@pytest.mark.parametrize(("case", "text", "pattern"), CORRUPT, ids=[c[0] for c in CORRUPT])
def test_from_json_gives_a_clear_error(case: str, text: str | bytes, pattern: str) -> None:
    with pytest.raises(ReportFormatError) as info:
        Report.from_json(text)
    assert re.search(pattern, str(info.value)), f"{case}: {info.value}"
    assert len(str(info.value)) < 400, "one readable message, not a dump"


def test_validate_names_inconsistencies() -> None:
    """A Report that decodes but is inconsistent (edges to missing nodes) is caught by validate()."""
    text = _with("runs.nonstrict.graphs.1.nodes.1.inputs", ["ghost"])
    report = Report.from_json(text)
    with pytest.raises(ReportFormatError, match="ghost"):
        report.validate()


# -- nstviz view --------------------------------------------------------------------------------


def _nstviz(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nstviz", *args], capture_output=True, text=True, cwd=cwd, timeout=120, check=False
    )


@pytest.mark.parametrize(
    ("case", "text", "pattern"),
    [c for c in CORRUPT if c[0] in ("truncated", "newer schema", "node without name", "a list", "invalid UTF-8")],
    ids=lambda v: v if isinstance(v, str) and len(v) < 30 else "",
)
def test_cli_view_refuses_with_one_line(case: str, text: str | bytes, pattern: str, tmp_path: Path) -> None:
    source = tmp_path / "report.json"
    source.write_bytes(text if isinstance(text, bytes) else text.encode())
    proc = _nstviz("view", str(source), cwd=tmp_path)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert re.search(pattern, proc.stderr), proc.stderr
    assert "hint" in proc.stderr.lower() or "is this a Report" in proc.stderr
    assert not (tmp_path / "report.html").exists(), "nothing half-written"


def test_cli_view_of_a_tampered_html_page(tmp_path: Path) -> None:
    page = tmp_path / "r.html"
    make_report().save_html(page)
    page.write_text(_tamper(page.read_text(encoding="utf-8"), '{"schema_version": 99}'), encoding="utf-8")
    proc = _nstviz("view", str(page), "-o", str(tmp_path / "out.html"), cwd=tmp_path)
    assert proc.returncode == 2 and "schema_version 99, newer than this nstviz" in proc.stderr, proc.stderr
    assert not (tmp_path / "out.html").exists()


# -- the page, in Chromium ------------------------------------------------------------------------


def _tamper(page: str, json_text: str | None, data: str | None = None) -> str:
    """The page with other Report JSON in its element (gzip+base64, as written), or other raw ``data``."""
    start = re.search(rf'<script type="application/gzip" id="{REPORT_ELEMENT_ID}" data-encoding="gzip\+base64">', page)
    assert start is not None
    end = page.index("</script>", start.end())
    if data is None:
        raw = json_text.replace("<", "\\u003c").encode("utf-8")
        data = base64.b64encode(gzip.compress(raw)).decode("ascii")
    return page[: start.end()] + data + page[end:]


PAGES = {
    "valid": None,
    "corrupted JSON": '{"schema_version": 1, "runs": {"baseline": ',
    "newer schema": _with("schema_version", SCHEMA_VERSION + 1),
    "nodes not a list": _with("runs.baseline.graphs.0.nodes", {"a": 1}),
    "no baseline run": _with("runs", {"nonstrict": {"name": "nonstrict"}}),
    "corrupted gzip data": None,
}
PAGE_MESSAGES = {
    "corrupted JSON": r"not valid JSON.*truncated or corrupted",
    "newer schema": rf"schema_version {SCHEMA_VERSION + 1}, newer than this viewer understands.*Upgrade nstviz",
    "nodes not a list": r"malformed: runs\.baseline\.graphs\[0\]\.nodes is not a list",
    "no baseline run": r"malformed: 'runs\.baseline' is missing",
    "corrupted gzip data": r"cannot be decompressed.*truncated or corrupted",
}


@pytest.mark.browser
def test_page_shows_a_clear_message_never_a_half_view(tmp_path: Path) -> None:
    from tests.html.conftest import probe_pages

    good = tmp_path / "valid.html"
    make_report().save_html(good)
    text = good.read_text(encoding="utf-8")
    specs = []
    for case, json_text in PAGES.items():
        path = good if case == "valid" else tmp_path / f"{case.replace(' ', '-')}.html"
        if case == "corrupted gzip data":  # not base64 at all
            path.write_text(_tamper(text, None, "H4sI!!not-base64!!"), encoding="utf-8")
        elif json_text is not None:
            path.write_text(_tamper(text, json_text), encoding="utf-8")
        specs.append(
            {"path": str(path), "wait_ready": True, "text_of": [".nsv-fatal-msg", "#nstviz-root canvas", "#nstviz-root svg"]}
        )
    truncated = tmp_path / "truncated-file.html"
    truncated.write_text(text[: text.index(f'id="{REPORT_ELEMENT_ID}"') + 400], encoding="utf-8")
    specs.append({"path": str(truncated), "wait_ready": False, "text_of": [".nsv-fatal-msg"]})

    results = probe_pages(tmp_path, specs)
    for case, obs in zip([*PAGES, "truncated file"], results, strict=True):
        assert obs["errors"] == [], f"{case}: page errors {obs['errors']}"
        assert obs["requests"] == [] and obs["dialogs"] == [], case
        fatal = obs["texts"][".nsv-fatal-msg"]
        if case == "valid":
            assert obs["ready"] and fatal == [], fatal
            assert obs["texts"]["#nstviz-root canvas"] or obs["texts"]["#nstviz-root svg"], "the valid page draws a graph"
        elif case == "truncated file":
            # The viewer's script was cut off with the data: nothing renders into the root at all;
            # the no-JS static summary above it is what the page still says.
            assert obs["rootChildren"] == 0 and fatal == []
        else:
            assert obs["ready"], f"{case}: the error screen must be reached"
            assert len(fatal) == 1 and re.search(PAGE_MESSAGES[case], fatal[0], re.S), f"{case}: {fatal}"
            assert obs["texts"]["#nstviz-root canvas"] == [] and obs["texts"]["#nstviz-root svg"] == [], (
                f"{case}: a graph was drawn for a Report that cannot be shown"
            )
