"""The opaque classes of torch's two ``register_constant`` nonstrict_trace tests.

torch's tests define ``State`` and register it as an opaque type in the test body. Opaque
registration is process-wide and cannot be undone, and a cell runs several times under
nstviz (a second registration of the same name raises "already registered"), so the classes
are defined and registered once, here, on import; the cells import them.

- torch 2.13 (``torch._opaque_base`` exists): as in the ported test file (commit 0099a913),
  ``State(torch._opaque_base.OpaqueBase)`` and ``register_opaque_type(typ="value"/"reference")``.
- torch 2.14 has no ``torch._opaque_base``; the 2.14 test file is not in the reference index.
  The value type is a plain class, as in an earlier stored version of the same test (its
  ``State`` has no base class), registered with ``register_custom_class(typ="constant")``
  (2.14's name for ``register_opaque_type(typ="value")``, which it deprecates); the reference
  type subclasses ``torch._custom_class_base.CustomClassBase`` (2.14 requires it) and is
  registered with ``typ="symbolic"`` (2.14's name for ``"reference"``).
"""

from __future__ import annotations

import torch
import torch._library.opaque_object as _opaque

_V213 = hasattr(torch, "_opaque_base")
if _V213:
    import torch._opaque_base

    _Base: type = torch._opaque_base.OpaqueBase
else:
    import torch._custom_class_base

    _Base = torch._custom_class_base.CustomClassBase


_StateBase: type = _Base if _V213 else object  # on 2.14 the value type is a plain class


class State(_StateBase):
    def __init__(self, n):
        self.n = n

    def get_num(self):
        torch._dynamo.graph_break()
        return self.n

    def __eq__(self, other):
        return isinstance(other, State) and self.n == other.n

    def __hash__(self):
        return hash(self.n)

    def __repr__(self):
        return f"State({self.n})"

    def __fx_repr__(self):
        return f"State({self.n})", {"State": State}


class RefState(_Base):
    """``State`` of ``test_nonstrict_newly_constructed_trace_register_constant_type_error``."""

    def __init__(self, n):
        self.n = n

    def get_num(self):
        torch._dynamo.graph_break()
        return self.n

    def __eq__(self, other):
        return isinstance(other, RefState) and self.n == other.n

    def __hash__(self):
        return hash(self.n)


# Assume `State` is implemented in C, and the author didn't bother to
# provide a pytree decomposition for it, and its instances are safe to
# treat as a constant by `torch.compile`.
if _V213:
    _opaque.register_opaque_type(State, typ="value")
    _opaque.register_opaque_type(RefState, typ="reference")
else:
    _opaque.register_custom_class(State, typ="constant")
    _opaque.register_custom_class(RefState, typ="symbolic")
