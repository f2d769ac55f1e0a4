"""The opaque classes of torch's two ``register_constant`` nonstrict_trace tests (torch 2.13).

torch's tests define ``State`` and call ``register_opaque_type`` in the test body. Opaque
registration is process-wide and cannot be undone, and a cell runs several times under
nstviz (a second ``register_opaque_type`` of the same name raises "already registered"), so
the classes are defined and registered once, here, on import; the cells import them.
Import this module only where ``torch._opaque_base`` exists (torch 2.13; 2.14 has no such module).
"""

from __future__ import annotations

import torch
import torch._library.opaque_object
import torch._opaque_base


class State(torch._opaque_base.OpaqueBase):
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


# Assume `State` is implemented in C, and the author didn't bother to
# provide a pytree decomposition for it, and its instances are safe to
# treat as a constant by `torch.compile`.
torch._library.opaque_object.register_opaque_type(State, typ="value")


class RefState(torch._opaque_base.OpaqueBase):
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


torch._library.opaque_object.register_opaque_type(RefState, typ="reference")
