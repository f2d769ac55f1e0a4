"""The tested torch versions, the hooks into torch's private API and the degradation rule (:func:`lose`)."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import re
import threading
from collections.abc import Iterator

import torch

from nstviz.errors import UnsupportedTorchError

TESTED_TORCH: tuple[str, ...] = ("2.13", "2.14")
"""The torch releases (major.minor) the suite runs on: the single source of that list."""

NEEDED = "torch " + " or ".join(TESTED_TORCH)

#: Target name fragment of the opaque Dynamo node that stands for a non-strict call.
FLAT_APPLY_NAME = "flat_apply_capture"


def _fail(what: str) -> UnsupportedTorchError:
    return UnsupportedTorchError(
        f"torch {torch.__version__} lacks {what}, which nstviz needs; install {NEEDED} "
        f"(e.g. pip install 'torch=={TESTED_TORCH[0]}.0')"
    )


def torch_version() -> str:
    """The installed torch version string."""
    return str(torch.__version__)


def _release(version: str) -> tuple[int, int] | None:
    m = re.match(r"(\d+)\.(\d+)", version)
    return (int(m.group(1)), int(m.group(2))) if m else None


def untested_torch_note() -> str | None:
    """One line saying the installed torch is not one nstviz is tested with, or None when it is."""
    version = torch_version()
    have = _release(version)
    tested = [r for r in (_release(t) for t in TESTED_TORCH) if r is not None]
    if have is not None and have in tested:
        return None
    if have is not None and have > max(tested):
        how = "is newer than"
    elif have is not None and have < min(tested):
        how = "is older than"
    else:
        how = "is not one of"
    return (
        f"torch {version} {how} the versions nstviz is tested with ({', '.join(TESTED_TORCH)}): "
        "untested; a Report's notes name any torch feature nstviz could not use there"
    )


# -- the hooks and the degradation rule ----------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class Hook:
    """One place nstviz depends on torch's private API."""

    key: str
    api: str
    """What it reads from torch (dotted path)."""
    feature: str
    """What nstviz gives with it."""
    essential: bool
    without: str = ""
    """What the capture does without it (degradable hooks)."""


HOOKS: dict[str, Hook] = {
    h.key: h
    for h in (
        Hook("nonstrict_trace", "torch._dynamo.nonstrict_trace", "tracing functions non-strictly", True),
        Hook(
            "id_sets",
            "torch._dynamo.trace_rules._allowed_callable_ids / _nonstrict_trace_callable_ids",
            "marking functions by name (and unmarking them after)",
            True,
        ),
        Hook("trace_logger", "torch._logging._internal.trace_log", "graph breaks and compiles (the structured trace)", True),
        Hook(
            "backend",
            "torch._dynamo.output_graph.OutputGraph.call_user_compiler",
            "recording graphs (Dynamo and ATen) and the non-strict regions in them",
            False,
            "each torch.compile ran with its own backend; breaks and compiles come from the trace log",
        ),
        Hook(
            "compile_ids",
            "torch._guards.CompileContext.current_trace_id",
            "matching graphs to their compiles",
            False,
            "graphs carry the compile id -1/-1",
        ),
        Hook(
            "aot_record",
            "torch._dynamo.backends.common.aot_autograd / torch._dynamo.backends.debugging.boxed_nop",
            "recording ATen graphs (backend 'record')",
            False,
            "the Dynamo graphs ran as traced, without AOTAutograd",
        ),
        Hook(
            "inductor",
            "torch._inductor.compile_fx.compile_fx / compile_fx_inner / config.post_grad_custom_post_pass",
            "recording inductor's ATen and post-grad graphs",
            False,
            "inductor compiled as usual, unrecorded",
        ),
        Hook(
            "dynamo_globals",
            "torch._dynamo.utils.CleanupManager / CleanupHook",
            "deleting the helper globals (__compiled_fn_*...) of earlier runs, and quiet exit",
            False,
            "those globals stay in the namespace until Dynamo's own cleanup",
        ),
        Hook(
            "break_counter",
            'torch._dynamo.utils.counters["graph_break"]',
            "Dynamo's own graph-break count",
            False,
            "the graph breaks each break caused are read from its message",
        ),
        Hook(
            "gb_registry",
            "torch/_dynamo/graph_break_registry.json",
            "the explanations and hints of torch's graph-break registry",
            False,
            "breaks show Dynamo's message only",
        ),
        Hook(
            "fatal_break",
            "torch._dynamo.exc.Unsupported",
            "recognising a graph break that stops a fullgraph=True compile",
            False,
            "it is shown as the run's error only",
        ),
        Hook(
            "fx_names",
            "torch.fx.node._get_qualified_name",
            "qualified names of graph node targets",
            False,
            "nodes show the target's plain name",
        ),
        Hook(
            "own_lines",
            "torch._higher_order_ops.flat_apply.impl / torch.fx.traceback.current_meta",
            "the op's own line inside a non-strict function",
            False,
            "ops inlined from a non-strict function show its call site only",
        ),
        Hook(
            "top_frame",
            "torch._dynamo.external_utils.wrap_inline / the torch.compile wrapper's closure cell 'fn'",
            "marking the function torch.compile compiles (traced non-strictly from a wrapper frame, as torch does)",
            False,
            "a mark on the compiled function itself did not take effect",
        ),
        Hook(
            "pytree",
            "torch.utils._pytree._private_register_pytree_node / _deregister_pytree_node",
            "the advisor's pytree-registration remedy",
            False,
            "the attempt ran without registering the class",
        ),
    )
}

_collectors: list[dict[str, str]] = []
_collectors_lock = threading.Lock()
_log = logging.getLogger("nstviz")


def lost_note(key: str, why: str) -> str:
    """The Report note for degradable hook ``key`` whose API is unusable (``why``)."""
    hook = HOOKS[key]
    return f"torch {torch_version()}: {hook.api} {why}, so nstviz goes without {hook.feature}; {hook.without}"


def lose(key: str, why: str) -> None:
    """A degradable hook found its torch API missing or changed: note it for every capture running."""
    note = lost_note(key, why)
    with _collectors_lock:
        for lost in _collectors:
            lost.setdefault(key, note)
    _log.debug("%s", note)


@contextlib.contextmanager
def noting_lost_features() -> Iterator[dict[str, str]]:
    """Collect the notes of the features lost while the block runs (``{hook key: note}``)."""
    lost: dict[str, str] = {}
    with _collectors_lock:
        _collectors.append(lost)
    try:
        yield lost
    finally:
        with _collectors_lock:
            _collectors.remove(lost)


def capture_notes(lost: dict[str, str]) -> list[str]:
    """The notes a Report of this torch starts with: untested version, then the lost features."""
    untested = untested_torch_note()
    return ([untested] if untested else []) + list(lost.values())
