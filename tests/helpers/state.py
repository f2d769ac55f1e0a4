"""Snapshot everything nstviz may touch, to compare before and after a call.

Usage::

    before = take()
    ...  # compare / trace_code / magic, successful or failing
    assert_same(before, take())
"""

from __future__ import annotations

import logging
import random
import sys
from typing import Any

import torch

from tests.helpers.threads import leak_candidates


def take() -> dict[str, Any]:
    """A comparable snapshot of the process state nstviz could change."""
    import torch._dynamo.decorators as decorators
    import torch._inductor.config as inductor_config
    from torch._dynamo import trace_rules
    from torch._dynamo.output_graph import OutputGraph
    from torch._logging._internal import trace_log

    np = sys.modules.get("numpy")
    loggers = {}
    for name in ("torch.__trace", "torch", "torch._dynamo", "torch._inductor", ""):
        lg = logging.getLogger(name) if name else logging.getLogger()
        loggers[name or "root"] = (tuple(lg.handlers), lg.level, lg.propagate, lg.disabled)
    return {
        "allowed_ids": frozenset(trace_rules._allowed_callable_ids()),
        "nonstrict_ids": frozenset(trace_rules._nonstrict_trace_callable_ids()),
        "dynamo_config": torch._dynamo.config.get_config_copy(),
        "trace_log": (tuple(trace_log.handlers), trace_log.level, trace_log.propagate),
        "loggers": loggers,
        "torch_rng": torch.get_rng_state(),
        "random_rng": random.getstate(),
        "numpy_rng": repr(np.random.get_state()) if np is not None else None,
        "stdout": sys.stdout,
        "stderr": sys.stderr,
        "call_user_compiler": OutputGraph.__dict__["call_user_compiler"],
        "nonstrict_trace": (torch._dynamo.nonstrict_trace, decorators.nonstrict_trace),
        "post_grad_custom_post_pass": inductor_config.post_grad_custom_post_pass,
        # torch's own long-lived lazy threads (first inductor compile, tqdm monitor) are not
        # nstviz's; any other new thread is a leak (tests/helpers/threads.py)
        "threads": sorted(name for _, name in leak_candidates()),
    }


def _equal(a: Any, b: Any) -> bool:
    try:
        result = a == b
        if isinstance(result, bool):
            return result
    except Exception:
        pass
    return repr(a) == repr(b)


def diff(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Names of the entries that changed."""
    changed = []
    for key, value in before.items():
        other = after[key]
        if key == "torch_rng":
            same = torch.equal(value, other)
        elif key == "dynamo_config":
            same = set(value) == set(other) and all(_equal(value[k], other[k]) for k in value)
        else:
            same = value == other
        if not same:
            changed.append(key)
    return changed


def assert_same(before: dict[str, Any], after: dict[str, Any]) -> None:
    """Fail naming every part of the state that changed."""
    changed = diff(before, after)
    detail = ""
    if "dynamo_config" in changed:
        b, a = before["dynamo_config"], after["dynamo_config"]
        detail = str({k: (b.get(k), a.get(k)) for k in set(b) | set(a) if not _equal(b.get(k), a.get(k))})[:2000]
    assert not changed, f"state changed: {changed} {detail}"
