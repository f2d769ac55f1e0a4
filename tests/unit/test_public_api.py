"""The public API and the Report schema stay in step (as httpx's test_exported_members does).

No torch.compile here: these checks read the package, the schema file and the viewer source.
"""

from __future__ import annotations

import json
import pathlib
import re

import nstviz
from nstviz import report as model
from nstviz.schema import SCHEMA_PATH, load_schema, schema_text

ROOT = pathlib.Path(__file__).resolve().parents[2]

PUBLIC = [
    "SCHEMA_VERSION",
    "CorruptLogError",
    "ForeignLogError",
    "NameResolutionError",
    "NotMarkableError",
    "NothingCompiledError",
    "NstvizError",
    "Report",
    "ReportFormatError",
    "TraceLogError",
    "TruncatedLogError",
    "UnsupportedTorchError",
    "UsageError",
    "__version__",
    "compare",
    "trace_code",
    "user_exception",
]


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: CONSTANTS, then Classes, then the rest, each alphabetical."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


def test_all_is_sorted_complete_and_resolves():
    assert nstviz.__all__ == PUBLIC, "nstviz.__all__ changed: update PUBLIC here on purpose"
    assert nstviz.__all__ == sorted(nstviz.__all__, key=_isort_key)
    for name in nstviz.__all__:
        assert getattr(nstviz, name) is not None, name
    public_modules = {"api", "errors", "report", "schema", "html", "cli", "graph_export", "jupyter", "analysis", "capture", "examples", "offline", "tracing", "passes", "advisor", "render"}
    for name in dir(nstviz):
        if name.startswith("_") or name in public_modules:
            continue
        assert name in nstviz.__all__ or name in ("annotations", "load_ipython_extension", "unload_ipython_extension"), name


def test_schema_file_version_and_model_agree():
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text(), "run `python -m nstviz.schema`"
    schema = load_schema()
    assert nstviz.SCHEMA_VERSION == model.SCHEMA_VERSION == 3
    assert schema["$id"].endswith(f"report.schema.v{model.SCHEMA_VERSION}.json")
    assert schema["properties"]["schema_version"]["maximum"] == model.SCHEMA_VERSION
    defs = set(schema["$defs"])
    assert {cls.__name__ for cls in model.MODEL_CLASSES if cls is not model.Report} == defs
    assert {"counts", "headline", "torch_version", "runs"} <= set(schema["required"])
    assert "id" in schema["$defs"]["Break"]["required"]
    assert schema["$defs"]["Node"]["properties"]["op"] == {
        "enum": ["placeholder", "get_attr", "call_function", "call_method", "call_module", "output"]
    }
    assert "user_exception" not in schema["properties"]


def test_viewer_reads_the_same_schema_version():
    source = (ROOT / "js" / "src" / "contract" / "decode.js").read_text(encoding="utf-8")
    found = re.search(r"export const SUPPORTED_SCHEMA = (\d+);", source)
    assert found is not None and int(found.group(1)) == model.SCHEMA_VERSION


def test_report_module_exports_every_model_class():
    for cls in model.MODEL_CLASSES:
        assert cls.__name__ in model.__all__
    assert json.loads(json.dumps(model.__all__)) == model.__all__


def test_trace_log_errors_are_public_and_private_packages_are_said():
    assert issubclass(nstviz.TraceLogError, nstviz.NstvizError)
    for child in (nstviz.ForeignLogError, nstviz.CorruptLogError, nstviz.TruncatedLogError):
        assert issubclass(child, nstviz.TraceLogError)
    private = (nstviz.__doc__ or "").split("Private", 1)[1]
    for name in ("capture", "passes", "advisor", "offline", "cli", "render"):
        assert f"``nstviz.{name}``" in private, name
