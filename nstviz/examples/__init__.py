"""The built-in example that ``nstviz demo`` runs (and the docs quote).

``demo.py`` is an ordinary script: ``nstviz demo`` is ``nstviz run`` on it with the two
helpers it defines traced non-strictly (:data:`DEMO_NONSTRICT`).
"""

from __future__ import annotations

from pathlib import Path

DEMO_SCRIPT: Path = Path(__file__).with_name("demo.py")
"""Path of the example script."""

DEMO_NONSTRICT: tuple[str, ...] = ("rms_scale", "get_magic_num")
"""The functions ``nstviz demo`` traces with ``torch._dynamo.nonstrict_trace``."""

DEMO_TITLE = "built-in example: a breaking helper in every block, and get_magic_num under fullgraph=True"

__all__ = ["DEMO_NONSTRICT", "DEMO_SCRIPT", "DEMO_TITLE"]
