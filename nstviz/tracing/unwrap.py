"""The error inside torch's fake-tensor wrappers, read from traceback text (torch-free).

Used where a break's root cause is read (:mod:`nstviz.tracing.breaks`, the live capture)
and by the advisor's wording of a failed attempt (:mod:`nstviz.passes.causes`).
"""

from __future__ import annotations

import re

__all__ = ["unwrap_fake_tensor_error"]

_GOT_RE = re.compile(r"got (\w+(?:Error|Exception))\((?P<q>['\"])(?P<msg>.*?)(?P=q)\)", re.S)


def unwrap_fake_tensor_error(text: str, internal: str) -> str:
    """``TorchRuntimeError: RuntimeError when making fake tensor call`` -> the error inside it.

    Args:
        text: the cause found so far (``Type: message``).
        internal: the traceback text it came from, which holds ``... got XError('...')``.
    """
    if "when making fake tensor call" not in text and "failed to run FX node" not in text:
        return text
    m = _GOT_RE.search(internal)
    if m is None:
        return text
    msg = m.group("msg").replace("\\n", " ").strip()
    return f"{m.group(1)}: {msg}"[:500]
