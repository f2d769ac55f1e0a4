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


def test_the_torch_free_names_of_dynamo_exceptions_cover_this_torch():
    """`nstviz view` tells a fatal break from the script's error without importing torch: by these names."""
    from nstviz.tracing.breaks import DYNAMO_EXCEPTION_NAMES

    assert _torch_compat.dynamo_exception_names() <= DYNAMO_EXCEPTION_NAMES
