"""A Dynamo compile's id as a value: :class:`CompileId` (tlparse's ``[0/1_1]``).

Torch keeps ``CompileId(frame_id, frame_compile_id, compiled_autograd_id)`` and an ``attempt``
beside it (``TraceId``); tlparse keeps the same struct and derives its text forms. Text comes in
once, where a log or an exception message names a compile (:meth:`CompileId.parse`); everything
after holds the value and writes it with :attr:`CompileId.text`. In the Report JSON it is an
object (``{"frame_id": 0, "frame_compile_id": 1, "attempt": 1}``; ``attempt`` and
``compiled_autograd_id`` are written only when set), formatted by the viewer's one helper
(``js/src/contract/compileid.js``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["CompileId"]

# torch._guards.CompileId.__str__ and TraceId.__str__ (torch 2.13): "0/1", "0/1_2" (attempt 2),
# "!3/0/1" (compiled autograd graph 3 compiling frame 0/1), "!3" (compiled autograd alone).
_TEXT_RE = re.compile(r"^(?:!(?P<ca>\d+)(?:/(?P<caf>\d+)/(?P<cac>\d+))?|(?P<frame>\d+)/(?P<compile>\d+))(?:_(?P<attempt>\d+))?$")


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class CompileId:
    """Which compile: frame ``frame_id``'s compile number ``frame_compile_id``, restart ``attempt``.

    ``compiled_autograd_id`` is set for compiles under compiled autograd (torch writes ``"!3/0/1"``),
    where the frame ids may be None (``"!3"``). Equal to another CompileId with the same fields,
    and to its own text (``CompileId.parse("0/1") == "0/1"``), so code and tests that name a
    compile by its text still compare.
    """

    frame_id: int | None
    frame_compile_id: int | None
    attempt: int = 0
    compiled_autograd_id: int | None = None

    @classmethod
    def parse(cls, text: str) -> CompileId:
        """The id torch or tlparse wrote: ``"0/1"``, ``"[0/1_1]"``, ``"!3/0/1"``, ``"!3"``.

        Raises:
            ValueError: ``text`` is not a compile id.
        """
        bare = text.strip() if isinstance(text, str) else ""
        if bare.startswith("[") and bare.endswith("]"):
            bare = bare[1:-1]
        m = _TEXT_RE.match(bare)
        if m is None:
            raise ValueError(f"not a compile id: {text!r:.60}")
        frame, compile_ = (m["frame"], m["compile"]) if m["ca"] is None else (m["caf"], m["cac"])
        return cls(
            frame_id=int(frame) if frame is not None else None,
            frame_compile_id=int(compile_) if compile_ is not None else None,
            attempt=int(m["attempt"] or 0),
            compiled_autograd_id=int(m["ca"]) if m["ca"] is not None else None,
        )

    @classmethod
    def coerce(cls, value: CompileId | str) -> CompileId:
        """``value`` as a CompileId (text is parsed: a model value written by hand, as tests do)."""
        return value if isinstance(value, CompileId) else cls.parse(value)

    @property
    def text(self) -> str:
        """``"0/1"``, ``"0/1_1"`` (attempt 1), ``"!3/0/1"`` (compiled autograd): tlparse's form."""
        base = f"{self.frame_id}/{self.frame_compile_id}" if self.frame_id is not None else ""
        if self.compiled_autograd_id is not None:
            base = f"!{self.compiled_autograd_id}" + (f"/{base}" if base else "")
        return base + (f"_{self.attempt}" if self.attempt else "")

    @property
    def bracketed(self) -> str:
        """``"[0/1_1]"``, as tlparse and Dynamo's log prefixes write it."""
        return f"[{self.text}]"

    @property
    def frame_compile(self) -> tuple[int | None, int | None]:
        """``(frame_id, frame_compile_id)``: the compile whatever its attempt (how graphs and compiles are keyed)."""
        return (self.frame_id, self.frame_compile_id)

    def __str__(self) -> str:
        return self.text

    def _key(self) -> tuple[int | None, int | None, int, int | None]:
        return (self.frame_id, self.frame_compile_id, self.attempt, self.compiled_autograd_id)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CompileId):
            return self._key() == other._key()
        if isinstance(other, str):
            return self.text == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.text)  # equal to its text, so hashed as its text
