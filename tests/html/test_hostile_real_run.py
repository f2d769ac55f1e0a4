"""Hostile strings through a REAL capture run (``nstviz run``) and the real viewer bundle.

The script lives in a folder named like an HTML tag, breaks with a message full of markup,
has ``</script>`` in a code line and in its printed output, and ends by raising an exception
whose message holds a lone surrogate. The page must stay inert, and show the text as written.
"""

from __future__ import annotations

import io
import json

import pytest
from page_probe import assert_inert

from nstviz.cli.main import main
from nstviz.cli.script import EXIT_SCRIPT_RAISED
from nstviz.render.html import extract_report_json

MSG = "</script><img src=x onerror=window.__nstviz_pwned=1> <a href='javascript:window.__nstviz_pwned=2'>link</a>"
FOLDER = "<img src=x onerror=window.__nstviz_pwned=4>"
CODE_LINE = 's = "</script><script>window.__nstviz_pwned=3</script>"'
MODULE = "<img src=x onerror=window['__nstviz_pwned']=7>"  # a submodule's name (no dots allowed)
SCRIPT = f"""
import torch

MSG = {MSG!r} + " \\u2028\\u2029 <!-- ]]>"


def helper(x):
    torch._dynamo.graph_break(msg=MSG)
    return x + 1


@torch.compile
def f(x):
    {CODE_LINE}
    return helper(x) * len(s)


class Wrap(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.add_module({MODULE!r}, torch.nn.Linear(3, 3))

    def forward(self, x):
        return getattr(self, {MODULE!r})(x).relu()


print("</script><script>window.__nstviz_pwned=5</script>")
out = f(torch.rand(3))
out2 = torch.compile(Wrap())(torch.ones(2, 3))
LONG = "{"A" * 20_000}"
raise RuntimeError("finished \\ud800 </script><img src=x onerror=window.__nstviz_pwned=6>")
"""


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("hostile")
    folder = root / FOLDER
    folder.mkdir()
    script = folder / "hostile.py"
    script.write_text(SCRIPT, encoding="utf-8")
    html_path, json_path = root / "report.html", root / "report.json"
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["run", str(script), "--nonstrict", "helper", "-o", str(html_path), "--json", str(json_path), "-q"],
        stdout=out,
        stderr=err,
    )
    return {
        "code": code,
        "out": out.getvalue(),
        "err": err.getvalue(),
        "html": html_path,
        "json": json_path,
        "script": script,
        "root": root,
    }


def test_the_capture_carries_the_hostile_strings(hostile_run):
    assert hostile_run["code"] == EXIT_SCRIPT_RAISED, hostile_run["err"]
    assert "RuntimeError: finished" in hostile_run["err"]
    data = json.loads(hostile_run["json"].read_text(encoding="utf-8"))
    baseline = data["runs"]["baseline"]
    (brk,) = baseline["breaks"]
    assert MSG in brk["detail"]
    assert FOLDER in brk["location"]["file"]
    assert "</script><script>window.__nstviz_pwned=5</script>" in baseline["stdout"]
    assert baseline["error"].startswith("RuntimeError: finished \ud800 </script>")
    # The page embeds the very same Report.
    page = hostile_run["html"].read_text(encoding="utf-8")
    assert json.loads(extract_report_json(page)) == data


@pytest.mark.browser
def test_the_page_is_inert_and_shows_the_text_as_written(hostile_run, probe):
    (obs,) = probe(
        [
            {
                "path": str(hostile_run["html"]),
                "clicks": [".nsv-break .nsv-break-head", 'button.nsv-tab[data-tab="source"]'],
                "text_of": [".nsv-break", "#nstviz-text-summary pre", '.nsv-tab-body[data-tab="source"]'],
            }
        ]
    )
    assert obs["ready"], obs["errors"]
    assert_inert(obs)
    (break_text,) = obs["texts"][".nsv-break"]
    assert MSG in break_text
    assert "hostile.py:8" in break_text
    (source,) = obs["texts"]['.nsv-tab-body[data-tab="source"]']
    assert CODE_LINE in source
    assert 'LONG = "' + "A" * 1000 in source  # a 20,000-character line (the viewer elides its end)
    (summary,) = obs["texts"]["#nstviz-text-summary pre"]
    assert summary  # the static summary is there, as text


@pytest.mark.browser
def test_a_hostile_module_name_shows_as_text_in_the_node_details(hostile_run, probe):
    (obs,) = probe(
        [
            {
                "path": str(hostile_run["html"]),
                "actions": [["fill", ".nsv-search", "addmm"], ["press", ".nsv-search", "Enter"]],
                "text_of": ['.nsv-tab-body[data-tab="node"]'],
            }
        ]
    )
    assert obs["ready"], obs["errors"]
    assert_inert(obs)
    (details,) = obs["texts"]['.nsv-tab-body[data-tab="node"]']
    assert "addmm" in details and MODULE in details


def test_the_saved_json_renders_again_with_view(hostile_run, tmp_path):
    out, err = io.StringIO(), io.StringIO()
    target = tmp_path / "again.html"
    assert main(["view", str(hostile_run["json"]), "-o", str(target), "-q"], stdout=out, stderr=err) == 0, (
        err.getvalue()
    )
    assert out.getvalue().strip().splitlines()[-1] == str(target.resolve())
    assert extract_report_json(target.read_text("utf-8")) == extract_report_json(
        hostile_run["html"].read_text("utf-8")
    )


@pytest.mark.browser
def test_the_viewers_export_button_writes_an_equivalent_inert_page(hostile_run, probe, tmp_path):
    (obs,) = probe(
        [
            {
                "path": str(hostile_run["html"]),
                "download": True,
                "download_selector": "button:has-text('Export HTML')",
            }
        ]
    )
    assert_inert(obs)
    exported = tmp_path / obs["download_name"]
    assert exported.suffix == ".html"
    exported.write_text(obs["download_text"], encoding="utf-8")
    original = hostile_run["html"].read_text(encoding="utf-8")
    assert extract_report_json(obs["download_text"]) == extract_report_json(original)
    (again,) = probe([{"path": str(exported), "text_of": ["#nstviz-text-summary pre"]}])
    assert again["ready"], again["errors"]
    assert_inert(again)


def test_view_re_renders_an_html_report(hostile_run, tmp_path):
    target = tmp_path / "re.html"
    out, err = io.StringIO(), io.StringIO()
    assert main(["view", str(hostile_run["html"]), "-o", str(target), "-q"], stdout=out, stderr=err) == 0, (
        err.getvalue()
    )
    assert extract_report_json(target.read_text("utf-8")) == extract_report_json(
        hostile_run["html"].read_text("utf-8")
    )
    code = main(["view", str(target), "-o", str(target)], stdout=out, stderr=err)
    assert code == 2 and "refusing to overwrite the input" in err.getvalue()
