"""Report <-> JSON: the generic dataclass codec, the version checks and the v1 upgrade.

What :meth:`Report.to_dict`, :meth:`~Report.to_json`, :meth:`~Report.from_dict` and
:meth:`~Report.from_json` call; the Report class comes in as an argument (this module names it for
type checkers only, as :mod:`nstviz.report.document` imports this one). Derived fields (``init=False``: :attr:`Break.tally`, :attr:`Run.break_order`) are written
for the viewer and recomputed, never read, on the way in. Version 1 data gets its break ids
here; its counts and headline come from the same passes a capture runs
(:mod:`nstviz.passes.upgrade`, imported when a version 1 Report is read). Version 1 and 2 data
wrote compile ids as text (``"1/0_1"``): they are parsed into :class:`CompileId` objects here
(:func:`_with_compile_ids`).
"""

from __future__ import annotations

import dataclasses
import json
import re
import types
from collections.abc import Callable
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from nstviz.errors import ReportFormatError
from nstviz.report.model import SCHEMA_VERSION, CompileId, Location, break_id

R = TypeVar("R")
"""The Report class, passed in by :mod:`nstviz.report.document` (which imports this module)."""

# Fields always written for these bulky classes; their other fields are written only when
# they differ from the default, which keeps a node at ~60-120 bytes of JSON.
_ALWAYS_WRITTEN: dict[str, frozenset[str]] = {
    "Node": frozenset({"name", "op", "target", "inputs", "region"}),
    "TensorInfo": frozenset({"shape", "dtype", "device"}),
    "CompileId": frozenset({"frame_id", "frame_compile_id"}),
}
# Fields added to a class after Reports with it were written: written only when they differ from
# the default, so a Report without them reads and writes back exactly as it was.
_WRITTEN_WHEN_SET: dict[str, frozenset[str]] = {
    "Compile": frozenset({
        "guard_failures", "fail_type", "fail_location", "backend_compile_time_s", "guard_count", "cache_size", "stack",
        "recompile", "limit_hit", "qualname",
    }),
    "Chip": frozenset({"help", "run", "compile_id"}),
    "Report": frozenset({"advisor_untried"}),
    "RunTiming": frozenset({"reused", "cost_s"}),
}
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_NON_FINITE = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def _field_default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


# The codec is compiled once per class into closures: a 50,000-node Report then encodes and
# decodes in about a second instead of several (no per-value type introspection).

_Encoder = Callable[[Any], Any]
_ENCODER_PLANS: dict[type, tuple[tuple[str, Any, bool], ...]] = {}


def _encoder_plan(cls: type) -> tuple[tuple[str, Any, bool], ...]:
    plan = _ENCODER_PLANS.get(cls)
    if plan is None:
        always = _ALWAYS_WRITTEN.get(cls.__name__)
        when_set = _WRITTEN_WHEN_SET.get(cls.__name__, frozenset())
        plan = tuple(
            (f.name, _field_default(f), (always is None or f.name in always) and f.name not in when_set)
            for f in dataclasses.fields(cls)
        )
        _ENCODER_PLANS[cls] = plan
    return plan


def _encode(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        if value != value or value in (float("inf"), float("-inf")):
            # JSON has no NaN/Infinity; JSON.parse in the viewer would reject them.
            return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
        return value
    if kind is tuple or kind is list:
        return [_encode(v) for v in value]
    if kind is dict:
        return {str(k): _encode(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for name, default, always in _encoder_plan(kind):
            item = getattr(value, name)
            if not always and item == default:
                continue
            out[name] = _encode(item)
        return out
    if isinstance(value, float):  # float subclasses (numpy scalars converted upstream)
        return _encode(float(value))
    return value


# A decode path is a linked tuple (parent, key), rendered only when an error is raised.
_Path = Any
_Decoder = Callable[[Any, _Path], Any]
_DECODERS: dict[Any, _Decoder] = {}


def _render_path(path: _Path) -> str:
    keys = []
    while isinstance(path, tuple):
        path, key = path
        keys.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    return str(path) + "".join(reversed(keys))


def _fail(path: _Path, message: str) -> ReportFormatError:
    return ReportFormatError(f"{_render_path(path)}: {message}")


def _decoder(tp: Any) -> _Decoder:
    decoder = _DECODERS.get(tp)
    if decoder is None:
        decoder = _build_decoder(tp)
        _DECODERS[tp] = decoder
    return decoder


def _build_decoder(tp: Any) -> _Decoder:
    origin = get_origin(tp)
    if dataclasses.is_dataclass(tp):
        return _dataclass_decoder(tp)
    if origin is Literal:
        return _literal_decoder(get_args(tp))
    if origin in (Union, types.UnionType):
        return _union_decoder(get_args(tp))
    if origin is tuple:
        return _tuple_decoder(get_args(tp)[0])
    if origin is dict:
        return _dict_decoder(get_args(tp)[1])
    if tp is Any:
        return lambda data, path: data
    if tp is float:
        return _decode_float
    if tp in (int, str, bool):
        return _exact_decoder(tp)
    raise TypeError(f"unsupported type in Report model: {tp!r}")  # pragma: no cover


def _literal_decoder(allowed: tuple[Any, ...]) -> _Decoder:
    def decode_literal(data: Any, path: _Path) -> Any:
        if data not in allowed:
            raise _fail(path, f"{data!r:.60} is not one of {allowed}")
        return data

    return decode_literal


def _union_decoder(members: tuple[Any, ...]) -> _Decoder:
    """``X | None`` (None or an ``X``), or a union tried member by member."""
    args = [a for a in members if a is not type(None)]
    nullable = len(args) < len(members)
    if len(args) == 1:
        inner = _decoder(args[0])

        def decode_optional(data: Any, path: _Path) -> Any:
            return None if data is None else inner(data, path)

        return decode_optional
    inners = [_decoder(a) for a in args]

    def decode_union(data: Any, path: _Path) -> Any:
        if data is None and nullable:
            return None
        for inner in inners:
            try:
                return inner(data, path)
            except ReportFormatError:
                continue
        raise _fail(path, f"{data!r:.60} matches no allowed type")

    return decode_union


def _tuple_decoder(item_tp: Any) -> _Decoder:
    item = _decoder(item_tp)

    def decode_tuple(data: Any, path: _Path) -> Any:
        if type(data) is not list:
            raise _fail(path, f"expected a list, got {data!r:.60}")
        if item_tp is str and all(type(v) is str for v in data):
            return tuple(data)
        return tuple([item(v, (path, i)) for i, v in enumerate(data)])

    return decode_tuple


def _dict_decoder(value_tp: Any) -> _Decoder:
    value = _decoder(value_tp)

    def decode_dict(data: Any, path: _Path) -> Any:
        if type(data) is not dict:
            raise _fail(path, f"expected an object, got {data!r:.60}")
        return {str(k): value(v, (path, k)) for k, v in data.items()}

    return decode_dict


def _decode_float(data: Any, path: _Path) -> Any:
    kind = type(data)
    if kind is float:
        return data
    if kind is int:
        return float(data)
    if kind is str and data in _NON_FINITE:
        return _NON_FINITE[data]
    raise _fail(path, f"expected float, got {data!r:.60}")


def _exact_decoder(tp: type) -> _Decoder:
    def decode_exact(data: Any, path: _Path) -> Any:
        if type(data) is tp:
            return data
        raise _fail(path, f"expected {tp.__name__}, got {data!r:.60}")

    return decode_exact


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """Resolved type hints of a model class (cached)."""
    hints = _HINTS.get(cls)
    if hints is None:
        hints = get_type_hints(cls)
        _HINTS[cls] = hints
    return hints


def _dataclass_decoder(cls: type) -> _Decoder:
    hints = _hints(cls)
    plan = tuple(
        (
            f.name,
            _decoder(hints[f.name]),
            bool(f.metadata.get("required"))
            or (f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING),
        )
        for f in dataclasses.fields(cls)
        if f.init
    )
    name = cls.__name__
    missing = object()

    def decode_dataclass(data: Any, path: _Path) -> Any:
        if type(data) is not dict:
            raise _fail(path, f"expected an object for {name}, got {data!r:.60}")
        kwargs = {}
        for field_name, decode, required in plan:
            item = data.get(field_name, missing)
            if item is not missing:
                kwargs[field_name] = decode(item, (path, field_name))
            elif required:
                raise _fail(path, f"missing required field '{field_name}' of {name}")
        return cls(**kwargs)

    return decode_dataclass


def _decode(tp: Any, data: Any, path: str) -> Any:
    return _decoder(tp)(data, path)


# -- the entry points ---------------------------------------------------------------------


def to_dict(report: Any) -> dict[str, Any]:
    """:meth:`Report.to_dict`."""
    return _encode(report)


def to_json(report: Any, *, indent: int | None = None) -> str:
    """:meth:`Report.to_json`."""
    separators = (",", ": ") if indent is not None else (",", ":")
    text = json.dumps(_encode(report), indent=indent, ensure_ascii=False, allow_nan=False, separators=separators)
    # Lone surrogates (e.g. from an exception message) cannot be written as UTF-8: escape them.
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def from_dict(cls: type[R], data: Any) -> R:
    """:meth:`Report.from_dict`: ``data`` decoded as a ``cls`` (the Report class)."""
    if not isinstance(data, dict):
        raise ReportFormatError(f"a Report must be a JSON object, got {type(data).__name__}")
    version = data.get("schema_version")
    if not isinstance(version, int):
        raise ReportFormatError("not an nstviz Report: it has no integer 'schema_version'")
    if version > SCHEMA_VERSION:
        raise ReportFormatError(
            f"this Report has schema_version {version}, newer than this nstviz understands "
            f"({SCHEMA_VERSION}); upgrade nstviz (pip install -U nstviz) to read it"
        )
    if version < 1:
        raise ReportFormatError(f"unknown Report schema_version {version}")
    if version == 1:
        return _from_v1(cls, data)
    if version == 2:
        data = {**_with_compile_ids(data), "schema_version": SCHEMA_VERSION}
    report = _decode(cls, _with_nothing_marked(data), "$")
    missing = [name for name in report.runs if name not in report.counts]
    if missing:
        raise ReportFormatError(f"$.counts: no counts for run(s) {', '.join(map(repr, missing))}")
    return report


def from_json(cls: type[R], text: str | bytes) -> R:
    """:meth:`Report.from_json`: ``text`` parsed and decoded as a ``cls`` (the Report class)."""
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ReportFormatError(f"the Report is not valid JSON: {exc}") from None
    return from_dict(cls, data)


def _with_nothing_marked(data: dict[str, Any]) -> dict[str, Any]:
    """Reports saved before :attr:`Headline.nothing_marked` said it only in a chip's text."""
    headline = data.get("headline")
    if not isinstance(headline, dict) or "nothing_marked" in headline or not isinstance(headline.get("chips"), list):
        return data
    said = any(
        isinstance(c, dict) and c.get("kind") == "note" and str(c.get("text", "")).startswith("nothing was marked")
        for c in headline["chips"]
    )
    return {**data, "headline": {**headline, "nothing_marked": True}} if said else data


def _from_v1(cls: type[R], data: dict[str, Any]) -> R:
    """Version 1 data: break ids computed here, then the missing counts and the headline."""
    from nstviz.passes.upgrade import upgrade_v1

    fields = {**_with_compile_ids(data), "schema_version": SCHEMA_VERSION, "headline": {}}
    fields["counts"] = data.get("counts") if isinstance(data.get("counts"), dict) else {}
    runs = fields.get("runs")  # compile ids already objects
    if isinstance(runs, dict):
        fields["runs"] = {
            name: {**run, "breaks": _with_ids(run.get("breaks"))} if isinstance(run, dict) else run
            for name, run in runs.items()
        }
    diff = fields.get("diff")
    if isinstance(diff, dict):
        fields["diff"] = {status: _with_ids(items) for status, items in diff.items()}
    return upgrade_v1(_decode(cls, fields, "$"))


def _with_ids(breaks: Any) -> Any:
    """Version 1 break dicts with their ``id`` (malformed items are left to the decoder to refuse)."""
    if not isinstance(breaks, list):
        return breaks
    out = []
    for b in breaks:
        if isinstance(b, dict) and "id" not in b:
            loc = b.get("location")
            try:
                where = Location(file=str(loc["file"]), line=int(loc["line"]), function=str(loc["function"]))
                b = {**b, "id": break_id(where, b.get("gb_id"), str(b.get("reason", "")))}
            except (TypeError, KeyError, ValueError):
                pass
        out.append(b)
    return out


# -- version 2 (and 1): compile ids written as text -----------------------------------------------


def _compile_id(text: Any) -> Any:
    """An id written as text (``"1/0_1"``) as the object version 3 writes; other values as they are."""
    if not isinstance(text, str):
        return text
    try:
        return _encode(CompileId.parse(text))
    except ValueError:
        return None


def _with_compile_ids(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1/2 data with every compile id an object.

    Breaks (``compile_ids``, splits), guard failures and headline chips, in the runs, the diff and
    each rank. Text that names no compile (none seen in Reports nstviz wrote) is dropped from
    ``compile_ids`` and splits, None elsewhere.
    """

    def brk(b: Any) -> Any:
        if not isinstance(b, dict):
            return b
        out = dict(b)
        if isinstance(b.get("compile_ids"), list):
            out["compile_ids"] = [c for c in map(_compile_id, b["compile_ids"]) if c is not None]
        if isinstance(b.get("splits"), list):
            splits = [{**s, "compile_id": _compile_id(s.get("compile_id"))} if isinstance(s, dict) else s for s in b["splits"]]
            out["splits"] = [s for s in splits if not isinstance(s, dict) or s["compile_id"] is not None]
        return out

    def compile_(c: Any) -> Any:
        if not isinstance(c, dict) or not isinstance(c.get("guard_failures"), list):
            return c
        failures = [{**g, "compile_id": _compile_id(g.get("compile_id"))} if isinstance(g, dict) else g for g in c["guard_failures"]]
        return {**c, "guard_failures": failures}

    def run(r: Any) -> Any:
        if not isinstance(r, dict):
            return r
        out = dict(r)
        if isinstance(r.get("breaks"), list):
            out["breaks"] = [brk(b) for b in r["breaks"]]
        if isinstance(r.get("compiles"), list):
            out["compiles"] = [compile_(c) for c in r["compiles"]]
        return out

    def runs_diff_headline(holder: dict[str, Any]) -> dict[str, Any]:
        out = dict(holder)
        if isinstance(holder.get("runs"), dict):
            out["runs"] = {name: run(r) for name, r in holder["runs"].items()}
        if isinstance(holder.get("diff"), dict):
            out["diff"] = {k: [brk(b) for b in v] if isinstance(v, list) else v for k, v in holder["diff"].items()}
        headline = holder.get("headline")
        if isinstance(headline, dict) and isinstance(headline.get("chips"), list):
            chips = [{**c, "compile_id": _compile_id(c["compile_id"])} if isinstance(c, dict) and "compile_id" in c else c for c in headline["chips"]]
            out["headline"] = {**headline, "chips": chips}
        return out

    out = runs_diff_headline(data)
    if isinstance(data.get("ranks"), list):
        out["ranks"] = [runs_diff_headline(r) if isinstance(r, dict) else r for r in data["ranks"]]
    return out

