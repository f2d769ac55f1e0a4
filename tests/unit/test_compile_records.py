"""Per-compile records without torch: guard failures read from every form torch writes them in,
a refused compile named from its frame, the recompile-limit chip of either run."""

from __future__ import annotations

import json

from nstviz.passes.headline import build_headline
from nstviz.report import Chip, Compile, Location, OutputCheck, Run, RunCounts
from nstviz.report._codec import _encode
from nstviz.tracing.recompiles import guard_failures, name_frames

ONE = ("0/1: n == 1                                  # if n > 2:  # mp/cmp/rc.py:7 in step\n"
       "User stack trace:\n  File \"/tmp/cmp/rc.py\", line 7, in step\n    if n > 2:")
TWO = "0/0: n == 0                                  # if n > 2:  # mp/cmp/rc.py:7 in step"
LIMIT = ("Dynamo recompile limit exceeded\n  Explanation: Dynamo attempted to recompile the code object too many "
         "times, exceeding the recompile_limit cache size limit (currently set to 2).")


def test_guard_failures_from_a_json_list_a_json_string_plain_text_and_the_metrics_reason():
    expected = [("0/1", "n == 1", "if n > 2:", "/tmp/cmp/rc.py", 7), ("0/0", "n == 0", "if n > 2:", None, None)]

    def rows(failures):
        return [(g.compile_id, g.guard, g.code, g.location and g.location.file, g.location and g.location.line)
                for g in failures]

    assert rows(guard_failures(json.dumps([ONE, TWO]))) == expected  # the recompile_reasons artifact
    assert rows(guard_failures(ONE + "\n" + TWO)) == expected  # plain text, entries one after another
    assert rows(guard_failures(json.dumps(ONE))) == expected[:1]
    size = guard_failures("0/0: tensor 'x' size mismatch at index 0. expected 3, actual 4")
    assert [(g.compile_id, g.guard, g.code) for g in size] == [("0/0", "tensor 'x' size mismatch at index 0. expected 3, actual 4", None)]
    assert guard_failures(None) == () and guard_failures("") == ()


def test_a_refused_compile_is_named_from_its_frame_and_marked():
    loc = Location(file="/x/m.py", line=5, function="step")
    first = Compile(frame_id=0, compile_id=0, function="step", location=loc, graph_ids=("0/0:dynamo",))
    refused = Compile(frame_id=0, compile_id=2, fail_reason=LIMIT, recompile_reason=TWO)
    named = name_frames((first, refused))
    assert (named[1].function, named[1].location, named[1].limit_hit, named[1].recompile) == ("step", loc, True, True)
    assert (first.limit_hit, first.recompile, named[1].tlparse_id) == (False, False, "0/2")
    assert Compile(frame_id=1, compile_id=0, attempt=1).tlparse_id == "1/0_1"


def test_the_chip_of_a_limit_hit_names_the_compile_of_its_run():
    loc = Location(file="/x/m.py", line=5, function="f")
    entry = Compile(frame_id=2, compile_id=0, function="f", location=loc, graph_ids=("2/0:dynamo",))
    refused = Compile(frame_id=2, compile_id=8, fail_reason=LIMIT)
    counts = RunCounts(graphs=1, breaks=0, break_hits=0, ops=1, aten_ops=1, regions=0, inlined_nodes=0, full_graph=True)
    runs = {"baseline": Run(name="baseline", compiles=(entry,)), "nonstrict": Run(name="nonstrict", compiles=name_frames((entry, refused)))}
    headline = build_headline(runs, {"baseline": counts, "nonstrict": counts}, OutputCheck(match=True))
    chip = next(c for c in headline.chips if "recompile limit" in c.text)
    assert chip.text == "nonstrict recompile limit hit: f (x/m.py:5) runs eagerly"
    assert (chip.run, chip.compile_id, chip.tone) == ("nonstrict", "2/8", "bad")
    assert "f (/x/m.py:5)" in chip.help and "recompile_limit allows (2)" in chip.help
    # a chip or compile without the new fields writes none of them: older files write back as they were
    assert _encode(Chip(kind="note", text="x")) == {"kind": "note", "text": "x", "tone": "neutral"}
    assert set(_encode(entry)) == {
        "frame_id", "compile_id", "attempt", "function", "location", "compile_time_s", "graph_ids", "guards",
        "recompile_reason", "restart_reasons", "fail_reason",
    }
