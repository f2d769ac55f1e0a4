"""Private torch API is used in the package nstviz/capture/_torch_compat only (read from the source).

The built-in examples (``nstviz/examples``) are user code and may use what users use.
"""

from __future__ import annotations

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "nstviz"
COMPAT = PACKAGE / "capture" / "_torch_compat"


def _private_torch_uses(path: pathlib.Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("torch."):
            if any(part.startswith("_") for part in node.module.split(".")):
                found.append(f"{path.name}:{node.lineno} from {node.module} import ...")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("torch.") and any(p.startswith("_") for p in alias.name.split(".")):
                    found.append(f"{path.name}:{node.lineno} import {alias.name}")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            chain, inner = [node.attr], node.value
            while isinstance(inner, ast.Attribute):
                chain.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and inner.id == "torch":
                found.append(f"{path.name}:{node.lineno} torch.{'.'.join(reversed(chain))}")
    return found


def test_private_torch_api_only_in_torch_compat():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if COMPAT not in path.parents and "examples" not in path.parts:  # the examples are user code
            offenders += _private_torch_uses(path)
    assert offenders == []
    assert any(_private_torch_uses(p) for p in COMPAT.glob("*.py"))  # the check sees private use where it is


def test_the_tracing_layer_imports_no_torch():
    """``nstviz/tracing`` is what ``ingest``/``diff``/``view`` read logs with, on machines without torch."""
    offenders = []
    for path in sorted((PACKAGE / "tracing").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}:{node.lineno} {n}" for n in names if n == "torch" or n.startswith("torch.")]
            offenders += [f"{path.name}:{node.lineno} {n}" for n in names if n.startswith("nstviz.capture")]
    assert offenders == []
