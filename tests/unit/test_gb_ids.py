"""The GB ids nstviz acts on name what torch's registry says they are (torch 2.13)."""

from __future__ import annotations

from nstviz import _gb_ids
from nstviz.capture import _torch_compat


def test_gb_ids_match_the_registry():
    registry = _torch_compat.gb_registry()
    types = {gb: registry[gb]["Gb_type"] for gb in (*_gb_ids.NONSTRICT_REJECTED, *_gb_ids.DATA_DEPENDENT)}
    assert types == {
        "GB0236": "Invalid input type for nonstrict_trace-ed function",
        "GB0251": "Unsupported output type for nonstrict_trace-ed function",
        "GB0033": "Data dependent operator",
        "GB0036": "Dynamic shape operator",
        "GB0124": "Unsupported Tensor.item() call with capture_scalar_outputs=False",
        "GB0170": "Data-dependent branching",
    }
