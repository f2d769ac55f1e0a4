"""DOT/SVG export of Report graphs through graphviz, on a recorded capture (tests/fixtures)."""

from __future__ import annotations

import pathlib
import re
import shutil
import xml.etree.ElementTree as ET

import pytest

import nstviz
from nstviz.errors import UsageError
from nstviz.render.graph_export import find_graph, save_graph, to_dot, to_svg


@pytest.fixture(scope="module")
def report() -> nstviz.Report:
    # the seed example, nonstrict=["get_magic_num"] (see tests/fixtures/make_fixtures.py)
    return nstviz.Report.load_json(pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "seed.report.json")


def test_dot_has_every_node_and_edge_and_one_cluster_per_region(report: nstviz.Report) -> None:
    graph = find_graph(report, "nonstrict")
    assert graph.level.startswith("aten")
    dot = to_dot(report, "nonstrict", graph.id)
    for node in graph.nodes:
        assert re.search(rf"^\s*{re.escape(node.name)} \[", dot, re.M), node.name
    edges = sum(len([i for i in n.inputs if i]) for n in graph.nodes)
    assert dot.count(" -> ") == edges
    regions = {n.region for n in graph.nodes if n.region}
    assert regions and dot.count("subgraph cluster_") == len(regions)


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot (apt-get install graphviz)")
def test_svg_is_valid_and_user_text_stays_text(report: nstviz.Report, tmp_path) -> None:
    svg = to_svg(report, "nonstrict")
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    assert "<script" not in svg
    path = save_graph(report, tmp_path / "g.svg", "baseline" if report.runs["baseline"].graphs else "nonstrict")
    assert path.read_text().lstrip().startswith("<?xml")
    assert save_graph(report, tmp_path / "g.dot").read_text().startswith("digraph")


def test_bad_names_are_explained(report: nstviz.Report, tmp_path) -> None:
    with pytest.raises(UsageError, match=r"no run 'nope'.*baseline"):
        to_dot(report, "nope")
    with pytest.raises(UsageError, match="no graph 'x/y'"):
        to_dot(report, "nonstrict", "x/y")
    with pytest.raises(UsageError, match=r"\.dot, \.gv or \.svg"):
        save_graph(report, tmp_path / "g.png")
