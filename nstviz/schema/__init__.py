"""JSON Schema of the Report, generated from the dataclasses in :mod:`nstviz.report`.

``report.schema.json`` next to this file is the checked-in copy; a test keeps it equal to
:func:`generate_schema`. Regenerate with ``python -m nstviz.schema``.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import types
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from nstviz.report import SCHEMA_VERSION, Report

SCHEMA_PATH = pathlib.Path(__file__).with_name("report.schema.json")


def _type_schema(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    origin = get_origin(tp)
    if dataclasses.is_dataclass(tp):
        name = tp.__name__
        if name not in defs:
            defs[name] = {}  # placeholder against recursion
            defs[name] = _dataclass_schema(tp, defs)
        return {"$ref": f"#/$defs/{name}"}
    if origin is Literal:
        return {"enum": list(get_args(tp))}
    if origin in (Union, types.UnionType):
        options = [_type_schema(a, defs) for a in get_args(tp) if a is not type(None)]
        if type(None) in get_args(tp):
            options.append({"type": "null"})
        return options[0] if len(options) == 1 else {"anyOf": options}
    if origin is tuple:
        return {"type": "array", "items": _type_schema(get_args(tp)[0], defs)}
    if origin is dict:
        return {"type": "object", "additionalProperties": _type_schema(get_args(tp)[1], defs)}
    if tp is str:
        return {"type": "string"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"anyOf": [{"type": "number"}, {"enum": ["NaN", "Infinity", "-Infinity"]}]}
    if tp is Any:
        return {}
    raise TypeError(f"no JSON Schema for {tp!r}")


def _dataclass_schema(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    hints = get_type_hints(cls)
    props: dict[str, Any] = {}
    required: list[str] = []
    for f in dataclasses.fields(cls):
        props[f.name] = _type_schema(hints[f.name], defs)
        if f.metadata.get("required") or (
            f.init and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        ):  # derived fields (init=False) are written, but a Report without them still loads
            required.append(f.name)
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        out["required"] = required
    doc = (cls.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ").strip()
    if doc:
        out["description"] = doc
    return out


def generate_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of :meth:`nstviz.report.Report.to_dict` output."""
    defs: dict[str, Any] = {}
    root = _dataclass_schema(Report, defs)
    root["properties"]["schema_version"] = {"type": "integer", "minimum": 1, "maximum": SCHEMA_VERSION}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://nstviz.invalid/report.schema.v{SCHEMA_VERSION}.json",
        "title": "nstviz Report",
        **root,
        "$defs": dict(sorted(defs.items())),
    }


def schema_text() -> str:
    """The schema as the checked-in file holds it."""
    return json.dumps(generate_schema(), indent=2, sort_keys=False) + "\n"


def load_schema() -> dict[str, Any]:
    """The checked-in schema."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
