"""The advisor's attempts, run by the capture session: one attempt -> one Run and its output check.

:class:`Trials` is what :func:`nstviz.advisor.search.search` is given (its
:class:`~nstviz.advisor.trials.Trials` protocol), running each attempt through a
:class:`TrialRunner` (the Session): it runs the code again with marks, adapters,
pytree registrations or ``torch._dynamo.config`` flags, on the session's namespace checkpoint,
and turns the run into plain values the advisor judges. It also makes the adapters and finds
the user classes the advisor asks for. The helpers here (output snapshots and comparisons,
"did this run fail") are shared with the session's own runs.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from nstviz.capture import _torch_compat, adapters, marking
from nstviz.capture._introspect import unwrap
from nstviz.capture.cell_inputs import cell_calls, rewrites_redefined
from nstviz.capture.deadline import Deadline
from nstviz.capture.grad_check import (
    Gradients,
    gradients,
    gradients_changed,
    gradients_differ,
    gradients_or_none,
    trains,
)
from nstviz.capture.namespace import NamespaceCheckpoint
from nstviz.capture.outputs import compare_outputs, snapshot_outputs
from nstviz.capture.recorder import Backend
from nstviz.capture.remedy import Mark, refreshing, rewrites_applied, rewrites_in, split_remedies
from nstviz.capture.runner import Body, RunResult
from nstviz.capture.state import buffers_kept, rng_state, set_rng_state
from nstviz.capture.subject import Subject
from nstviz.capture.timing import time_calls
from nstviz.passes.headline import compile_failed
from nstviz.passes.output_verdict import build_output_check
from nstviz.report import Candidate, OutputCheck, OutputComparison, Recommendation, Run

__all__ = ["Advice", "TrialRunner", "Trials", "compare", "failed", "failure_words", "snapshot"]

Marks = Callable[[], Sequence[Callable[..., Any]]]
"""The functions to mark, asked again as the code (re)defines them."""


@dataclass(frozen=True)
class Advice:
    """What the advisor hands back to the capture: the candidates, the recommendation, the live objects behind it."""

    candidates: tuple[Candidate, ...]
    recommendation: Recommendation | None
    functions: tuple[tuple[str, Callable[..., Any]], ...] = ()
    """The recommended functions to mark, with their names (``recommendation.functions``)."""
    remedies: tuple[Mark, ...] = ()
    """The kept adapters (``recommendation.adapters``), then the pytree classes (``recommendation.pytree``)."""


class TrialRunner(Protocol):
    """What :class:`Trials` needs of the capture that runs its attempts (the Session is one).

    Attributes:
        backend: the capture's backend (the graph counts on other inputs compile with it).
        results: every run made so far, by name.
    """

    backend: Backend
    results: Mapping[str, RunResult]

    def run_trial(
        self, name: str, body: Body, rng: dict[str, Any], functions: Sequence[Callable[..., Any]], marks: Marks
    ) -> RunResult:
        """Run ``body`` as the advisor's attempt ``name`` with ``marks`` marked non-strict (counted as progress)."""
        ...

    def plain_run(self, name: str) -> Run:
        """The run ``name`` as plain values, finished (the form the advisor judges)."""
        ...

    def time_attempt(self, name: str, functions: Sequence[Callable[..., Any]], marks: Marks | None) -> Run | None:
        """Time the attempt ``name`` now (its remedies applied by the caller); its Run, or None when not timed."""
        ...


def _grad_mode_kept(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method``'s runs leave torch's grad mode as they found it.

    Compiled code that raises inside a ``torch.no_grad()`` region does not put grad mode back
    (torch 2.13: a matcher decorated with ``@torch.no_grad()`` raising on an input set it does
    not take left it off): an attempt or a check must not change the runs after it.
    """

    @functools.wraps(method)
    def kept(self: Any, *args: Any, **kwargs: Any) -> Any:
        import torch

        with torch.set_grad_enabled(torch.is_grad_enabled()):
            return method(self, *args, **kwargs)

    return kept


class Trials:
    """The attempts of one capture (see :class:`nstviz.advisor.trials.Trials`)."""

    def __init__(
        self,
        session: TrialRunner,
        subject: Subject,
        base: RunResult,
        checkpoint: NamespaceCheckpoint,
        outputs: Mapping[str, Mapping[str, Any]],
        rng: dict[str, Any],
    ) -> None:
        self.session = session
        self.subject = subject
        self.base = base
        self.checkpoint = checkpoint
        self.outputs = outputs
        self._differs: bool | None = None  # the baseline's outputs vs eager's, compared once
        self.rng = rng
        self.deadline: Deadline | None = session.deadline
        """The advisor's one deadline (None: no time budget); the extra runs below start only in time."""
        self.decorator = _torch_compat.nonstrict_trace_spelling()
        self.none_inputs_ok = _torch_compat.nonstrict_accepts_none()
        # source rewrites are verified on other inputs: only a callable has inputs to vary
        self.other_inputs = self._other_inputs  # a cell's compiled calls give it inputs too (cell_inputs)

    def _in_time(self, what: str, runs: float = 1.0, *, repeats_last: bool = False) -> bool:
        """Whether ``runs`` runs' worth of work fits the deadline; if not, ``what`` is noted as left untried.

        ``repeats_last``: the work repeats the attempt that just ran (its check on other inputs),
        so one run of it is expected to cost what that attempt cost, not the longest attempt's.
        """
        deadline = self.deadline
        if deadline is None:
            return True
        one_run = deadline.last_attempt() if repeats_last else deadline.estimate()
        if deadline.allows(runs * one_run):
            return True
        deadline.leave(what)
        return False

    def _check_in_time(self, what: str) -> bool:
        """Whether one compile of the recommendation's last check fits (about one run as written)."""
        deadline = self.deadline
        if deadline is None or deadline.allows(deadline.check_cost()):
            return True
        deadline.leave(what)
        return False

    def resolve(self, name: str) -> Callable[..., Any] | None:
        """The function ``name`` stands for in the user's namespace, or None."""
        return self.subject.resolve_name(name)

    @_grad_mode_kept
    def try_marks(self, marks: tuple[Mark, ...], run_name: str) -> tuple[Run, OutputCheck]:
        """Run the code with ``marks`` (functions, adapters, pytree classes, rewrites) as run ``run_name``."""
        session = self.session
        self.checkpoint.restore()
        functions, _, _ = split_remedies(marks)
        with self._remedies(marks) as current:
            result = session.run_trial(run_name, self.subject.body, self.rng, functions, current)
        return session.plain_run(run_name), self._check(result, run_name)

    @_grad_mode_kept
    def time_attempt(self, marks: tuple[Mark, ...], flags: dict[str, bool], run_name: str) -> Run | None:
        """Time the attempt ``run_name`` (made with ``marks`` and ``flags``) now; its Run, or None when not timed.

        Attempts are not timed as they run: the advisor times only those it must choose between
        by time (as few graphs as the best), with their remedies applied again for the timing.
        """
        session = self.session
        functions, _, _ = split_remedies(marks)
        with _torch_compat.dynamo_config_patch(flags), self._remedies(marks) as current:
            timed = session.time_attempt(run_name, functions, current)
        if timed is None:
            return None
        return session.plain_run(run_name)

    def try_config(self, marks: tuple[Mark, ...], flags: dict[str, bool], run_name: str) -> tuple[Run, OutputCheck]:
        """An attempt with the breaks' config hints set (and ``marks`` marked)."""
        with _torch_compat.dynamo_config_patch(flags):
            return self.try_marks(marks, run_name)

    @_grad_mode_kept
    def _other_inputs(self, marks: tuple[Mark, ...], flags: dict[str, bool] | None = None) -> tuple[bool | None, str]:
        """Outputs on new inputs of the same shapes: eager vs compiled with the rewrites among ``marks``.

        A rewrite is proven on the attempt's inputs by the attempt itself; this checks it on two
        more input sets (other random values, and the inputs negated, which usually takes a
        data-dependent branch's other side). Returns ``(match, why)``; ``match`` is None when
        there is no second input set (``trace_code`` runs code, not a callable with inputs).
        """
        import torch

        subject = self.subject
        if not self._in_time("a rewrite's check on other inputs", repeats_last=True):
            return None, "not checked on other inputs: the time budget ran out"
        self.checkpoint.restore()
        checks, why = self._calls_to_vary()
        if not checks:
            self.checkpoint.restore()
            return None, f"no second input set: {why}"

        torch.manual_seed(0)
        start = rng_state()  # numpy's and random's too: code that draws a mask draws the same one in both runs
        n, graded, as_written = 0, False, ""
        try:
            for eager, sets in checks:
                # each run starts from the same module state (a training forward updates running statistics
                # and lazy attributes); a cell's redefinitions live in its namespace, so there only the buffers
                put_back = self.checkpoint.restore if subject.entry == "compare" else buffers_kept(eager)
                with_grads = trains(eager)
                sets, want, want_grads, refused = _sets_eager_takes(
                    eager, sets, start, with_grads=with_grads, before_each=put_back)
                if not sets:
                    return None, f"no second input set: the code as written raises on the varied inputs ({refused})"
                _torch_compat.dynamo_reset()
                with (
                    _torch_compat.dynamo_config_patch(flags or {}),
                    rewrites_redefined(rewrites_in(marks), subject.code_namespace) as redefine,
                    rewrites_applied(marks),
                ):
                    redefine()  # the cell's own definitions, as the observing run left them
                    compiled = torch.compile(eager, backend="eager")
                    off_eager: list[tuple[InputSet, Mapping[str, Any], Gradients | None, str]] = []
                    for (a, k), w, w_grads in zip(sets, want, want_grads, strict=True):
                        n += 1
                        set_rng_state(start)
                        put_back()
                        returned = compiled(*a, **k)
                        got = snapshot({"return": returned})
                        got_grads = gradients(returned) if w_grads is not None else None
                        c = compare_outputs(w, got, left_name="eager", right_name="rewritten")
                        if c.match is False:
                            off_eager.append(((a, k), got, got_grads,
                                              f"outputs differ from eager on input set {n + 1} (same shapes, other values)"))
                        elif w_grads is not None and (differs := gradients_changed(w_grads, got_grads, taken=True)):
                            off_eager.append(((a, k), got, got_grads, f"gradients differ from eager on input set {n + 1}: {differs}"))
                        graded |= w_grads is not None
                if off_eager:
                    # the code compiled as written may differ from eager itself (dropout recomputed under
                    # gradient checkpointing): a rewrite that computes what it computes changes nothing
                    if (why := _off_as_written(eager, off_eager, start, put_back)) is not None:
                        return False, why
                    as_written = " (where they differ from eager, the code compiled as written differs the same way)"
        except Exception as e:  # a rewrite that fails on other values is not kept
            return False, f"failed on another input set: {_in_one_line(e)}"
        finally:
            _torch_compat.dynamo_reset()
            self.checkpoint.restore()
        what = "outputs and gradients" if graded else "outputs"
        return True, f"{what} equal eager on {n} more input set{'s' if n > 1 else ''} of the same shapes{as_written}"

    def _calls_to_vary(self) -> tuple[list[tuple[Callable[..., Any], list[InputSet]]], str]:
        """Each compiled call the code makes (as written, eagerly) with its other input sets; or why there are none."""
        subject = self.subject
        if subject.entry == "compare" and subject.eager_body is not None:
            calls = [self._eager_call()]
        elif subject.code_namespace is not None:  # a cell: the compiled calls it makes, seen eagerly
            calls = cell_calls(subject.body)
        else:
            return [], "the code is not a callable with inputs"
        checks = [(fn, sets) for fn, args, kwargs in calls if (sets := other_input_sets(args, kwargs, fallback=True))]
        return checks, "the inputs have no tensors to vary" if calls else "the code made no compiled call to vary"

    @_grad_mode_kept
    def graphs_elsewhere(
        self, marks: tuple[Mark, ...], flags: dict[str, bool], *, given_inputs: bool = False
    ) -> int | Exception | None:
        """Dynamo graphs of one call on another input set and random state, with ``marks`` and ``flags``.

        No marks and no flags: the code as written. Where the graph count depends on values
        (random routing in training, data-dependent loops), fewer graphs on the attempt's inputs
        can be luck: where the code as written gives as many graphs here, the recommendation must
        lower the count here too. The count is made with Dynamo's ``eager`` backend, as
        ``torch._dynamo.explain`` makes it. ``given_inputs``: on the inputs given instead (where
        the other input sets break the code as written). None when the code is not a callable
        with inputs or time ran out; the exception when the compiled call raised.
        """
        import torch

        subject = self.subject
        if subject.entry != "compare" or not self._check_in_time("the graph count on another input set"):
            return None
        fn, args, kwargs = (subject.namespace[k] for k in ("fn", "args", "kwargs"))
        a, k = (args, kwargs) if given_inputs else (other_input_sets(args, kwargs) or [(args, kwargs)])[0]
        self.checkpoint.restore()
        try:
            with contextlib.ExitStack() as stack:
                current: Callable[[], Sequence[Callable[..., Any]]] = tuple
                if marks or flags:
                    stack.enter_context(_torch_compat.dynamo_config_patch(flags))
                    current = stack.enter_context(self._remedies(marks))
                stack.enter_context(marking.marked(list(current())))
                torch.manual_seed(1)  # another random state than the attempts' (dropout, router noise)
                # Dynamo alone decides the graphs: its "eager" backend counts them without
                # AOTAutograd's trace (the remedy already compiled whole on the attempt's inputs)
                timing = time_calls([(fn, a, k)], backend="eager", eager=False, warmup=0, calls=1, budget_s=None)
            return timing.graphs
        except Exception as e:  # the caller decides: the code as written may raise here too
            return e
        finally:
            _torch_compat.dynamo_reset()
            self.checkpoint.restore()

    @_grad_mode_kept
    def run_eager(self) -> bool:
        """Run the callable eagerly on its inputs and on the other input sets; False when it cannot.

        The advisor records functions' calls around this (a custom op's fake is built from
        their output shapes; what candidates return: :mod:`nstviz.advisor.returns`). False when
        the code is not a callable with inputs, or the run on its own inputs fails (an other set it
        raises on is left out, as in the rewrites' check). State is restored after.
        """
        subject = self.subject
        if subject.entry != "compare" or not self._in_time("an eager run of the code (custom-op fakes, what candidates return)"):
            return False
        eager, args, kwargs = self._eager_call()
        self.checkpoint.restore()
        try:
            eager(*args, **kwargs)
            _sets_eager_takes(eager, other_input_sets(args, kwargs, fallback=True), rng_state())
        except Exception:  # no calls to build a fake from
            return False
        finally:
            self.checkpoint.restore()
        return True

    @contextlib.contextmanager
    def _remedies(self, marks: tuple[Mark, ...]) -> Iterator[Marks]:
        """Source rewrites, adapters and pytree registrations of ``marks`` in place; yields the functions to mark.

        Everything is undone after the block, also on errors.
        """
        functions, ads, classes = split_remedies(marks)
        with (
            rewrites_redefined(rewrites_in(marks), self.subject.code_namespace) as redefine,  # keyed before applied
            rewrites_applied(marks),
            adapters.installed(ads) as readapt,
            adapters.registered(classes, self.subject.code_namespace) as refresh,
        ):
            yield refreshing(self.subject.rematch(functions), lambda: (redefine(), refresh()), readapt)

    def _eager_call(self) -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
        """``compare()``'s callable as written (not compiled, bound like the compiled one), and its inputs."""
        fn, args, kwargs = (self.subject.namespace[k] for k in ("fn", "args", "kwargs"))
        eager = _torch_compat.compiled_original(fn) or fn
        if _torch_compat.is_compiled_object(fn) and hasattr(fn, "__self__") and not hasattr(eager, "__self__"):
            eager = eager.__get__(fn.__self__)
        return eager, args, kwargs

    def adapt(self, qualname: str, function: Callable[..., Any], caller_files: Sequence[str]) -> Any:
        """An adapter for a function refused for None inputs (installed only during runs)."""
        callers = [m.__dict__ for m in _modules_for_files(caller_files)]
        return adapters.make_adapter(function, qualname, callers)

    def register(self, class_name: str, function: Callable[..., Any]) -> Any:
        """The user class ``class_name`` that ``function`` was refused for, to register with pytree."""
        cls = _user_class(class_name, function)
        return adapters.pytree_type(cls) if cls is not None else None

    def _check(self, result: RunResult, run_name: str) -> OutputCheck:
        base, outputs = self.base, self.outputs
        if failed(base) and not failed(result) and outputs.get("eager"):
            # the baseline failed to compile: the attempt's outputs are checked against eager
            pair = {"eager": outputs["eager"], run_name: snapshot(self.subject.outputs_of(result))}
        elif failed(base) or failed(result):
            name = "baseline" if failed(base) else run_name
            words = failure_words(self.session.results[name], name)
            return OutputCheck(match=None, skipped_reason=f"the {words}, so outputs cannot be compared")
        else:
            mine = snapshot(self.subject.outputs_of(result))
            if self._baseline_differs_from_eager():
                # the code as compiled is wrong (e.g. numpy's random draws traced onto torch's generator):
                # an attempt that puts it right matches eager; one that keeps it matches the baseline
                comparisons, nondeterministic = compare({"eager": outputs["eager"], run_name: mine}, run_name)
                right = build_output_check(comparisons, nondeterministic=nondeterministic)
                if right.match:
                    return right
            pair = {"baseline": outputs.get("baseline", {}), run_name: mine}
        comparisons, nondeterministic = compare(pair, run_name)
        return build_output_check(comparisons, nondeterministic=nondeterministic)

    def _baseline_differs_from_eager(self) -> bool:
        """The baseline's outputs differ from a deterministic eager run's (compared once)."""
        if self._differs is None:
            outputs = self.outputs
            self._differs = False
            if outputs.get("eager") and outputs.get("baseline"):
                again = outputs.get("eager (again)")
                steady = again is None or compare_outputs(
                    outputs["eager"], again, left_name="eager", right_name="eager (again)").match is not False
                self._differs = steady and compare_outputs(
                    outputs["eager"], outputs["baseline"], left_name="eager", right_name="baseline").match is False
        return self._differs


def _in_one_line(e: BaseException) -> str:
    """``IndexError: index is out of bounds ...``: the exception's type and its message's first line."""
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def failed(result: RunResult) -> bool:
    """Whether the run raised or a compile of it failed (also when the code caught the exception)."""
    return result.exception is not None or compile_failed(result.run)


def failure_words(result: RunResult, name: str) -> str:
    """``"baseline run raised"`` or ``"baseline compile failed"``."""
    return f"{name} run raised" if result.exception is not None else f"{name} compile failed"


def snapshot(values: Mapping[str, Any]) -> Mapping[str, Any]:
    """A copy of a run's outputs, taken before the next run changes them."""
    try:
        return snapshot_outputs(dict(values))
    except Exception:  # an output that cannot be copied is compared as it is
        return dict(values)


def compare(outputs: Mapping[str, Mapping[str, Any]], other: str) -> tuple[tuple[OutputComparison, ...], bool]:
    """Every pair of runs compared (baseline vs ``other``, eager vs both), and whether eager disagreed with itself."""
    comparisons = []
    for left, right in (("baseline", other), ("eager", "baseline"), ("eager", other)):
        if left in outputs and right in outputs:
            comparisons.append(compare_outputs(outputs[left], outputs[right], left_name=left, right_name=right))
    nondeterministic = False
    if "eager" in outputs and "eager (again)" in outputs:
        again = compare_outputs(outputs["eager"], outputs["eager (again)"], left_name="eager", right_name="eager (again)")
        if again.match is False:
            nondeterministic = True
            comparisons.append(again)
    return tuple(comparisons), nondeterministic


InputSet = tuple[tuple[Any, ...], dict[str, Any]]


def other_input_sets(
    args: tuple[Any, ...], kwargs: dict[str, Any], seed: int = 1, *, fallback: bool = False
) -> list[InputSet]:
    """Two more input sets of the same shapes: other random values, and the float inputs negated.

    Floating tensors get new normal values (same mean and spread); integer tensors (token ids)
    new values within their observed range, a negative entry among non-negative ones (a label's
    ignore index, -100) kept where it is. Empty when no tensor input varies. With
    ``fallback``, a third set comes last: the float inputs' other values with the integer ones
    kept, for code whose integer inputs carry structure that random ids break (a grounding
    model's label map read from the prompt's ids); :func:`_sets_eager_takes` uses it only in
    place of a set the code as written raises on.
    """
    import torch

    g = torch.Generator().manual_seed(seed)

    def leaf_like(new: Any, a: Any) -> Any:  # a varied input is a leaf as its original is, not a function of it
        return new.detach().requires_grad_(a.requires_grad)

    def other(a: Any, ints: bool = True) -> Any:
        if not isinstance(a, torch.Tensor) or a.numel() == 0:
            return a
        if a.is_floating_point():
            spread = a.float().std() if a.numel() > 1 else torch.tensor(1.0)
            return leaf_like((torch.randn(a.shape, generator=g) * spread + a.float().mean()).to(a.dtype).to(a.device), a)
        if ints and a.dtype in (torch.int32, torch.int64) and int(a.min()) < int(a.max()):
            if int(a.min()) < 0 <= int(a.max()):  # labels with an ignore index (-100): those entries stay
                kept = a >= 0
                low = int(a[kept].min())
                if low == int(a.max()):
                    return a
                new = torch.randint(low, int(a.max()) + 1, a.shape, generator=g, dtype=a.dtype).to(a.device)
                return torch.where(kept, new, a)
            return torch.randint(int(a.min()), int(a.max()) + 1, a.shape, generator=g, dtype=a.dtype).to(a.device)
        return a

    def neg(a: Any) -> Any:
        return leaf_like(-a, a) if isinstance(a, torch.Tensor) and a.is_floating_point() else a

    def floats_only(a: Any) -> Any:
        return other(a, ints=False)

    out = []
    for f in (other, neg, floats_only) if fallback else (other, neg):
        a2, k2 = tuple(f(a) for a in args), {k: f(v) for k, v in kwargs.items()}
        changed = any(x is not y for x, y in zip((*a2, *k2.values()), (*args, *kwargs.values()), strict=True))
        if changed:
            out.append((a2, k2))
    return out


def _sets_eager_takes(
    eager: Callable[..., Any], sets: list[InputSet], start: Any, *, with_grads: bool = False,
    before_each: Callable[[], None] = lambda: None,
) -> tuple[list[InputSet], list[Mapping[str, Any]], list[Gradients | None], str]:
    """The input sets the code as written runs on, at most two, with its outputs and gradients; why others were dropped.

    A set the code itself raises on says nothing about a rewrite: it is dropped, and the
    fallback set (last, see :func:`other_input_sets`) takes its place. The gradients
    (:mod:`nstviz.capture.grad_check`) are taken only ``with_grads``, None otherwise.
    ``before_each`` runs before each call (it puts the module's state back, so each set starts
    from the same running statistics).
    """
    taken: list[InputSet] = []
    outputs: list[Mapping[str, Any]] = []
    grads: list[Gradients | None] = []
    refused = ""
    for a, k in sets:
        if len(taken) == 2:
            break
        set_rng_state(start)
        before_each()
        try:
            returned = eager(*a, **k)
            outputs.append(snapshot({"return": returned}))
            grads.append(gradients_or_none(returned) if with_grads else None)
        except Exception as e:
            refused = refused or _in_one_line(e)
            continue
        taken.append((a, k))
    return taken, outputs, grads, refused


def _off_as_written(
    eager: Callable[..., Any], off_eager: list[tuple[InputSet, Mapping[str, Any], Gradients | None, str]],
    start: Any, before_each: Callable[[], None],
) -> str | None:
    """Why an attempt that differs from eager on these sets is not kept: None when it equals the code compiled as written.

    Each entry is ``(input set, the attempt's outputs, its gradients, why it differs from eager)``.
    """
    import torch

    _torch_compat.dynamo_reset()
    compiled = torch.compile(eager, backend="eager")
    for (a, k), got, got_grads, why in off_eager:
        set_rng_state(start)
        before_each()
        try:
            returned = compiled(*a, **k)
        except Exception:
            return why
        written = snapshot({"return": returned})
        if compare_outputs(written, got, left_name="compiled as written", right_name="rewritten").match is False:
            return why
        if got_grads is not None and ((written_grads := gradients_or_none(returned)) is None
                                      or gradients_differ(written_grads, got_grads)):
            return why
    return None


def _modules_for_files(files: Iterable[str]) -> list[Any]:
    wanted = {os.path.abspath(f) for f in files if f and not f.startswith("<")}
    return [
        m for m in list(sys.modules.values())
        if getattr(m, "__file__", None) and os.path.abspath(m.__file__) in wanted
    ]


_LIBRARY_ROOTS = ("torch", "numpy", "builtins", "typing")


def _user_class(name: str, function: Callable[..., Any]) -> type | None:
    """The class ``name`` (``Box`` or ``pkg.mod.Box``) as ``function`` sees it, when it is user code."""
    import builtins

    raw = unwrap(function)
    head, _, last = name.rpartition(".")
    cls = getattr(raw, "__globals__", {}).get(last)
    if cls is None and head in sys.modules:
        cls = getattr(sys.modules[head], last, None)
    if not isinstance(cls, type):
        return None
    if cls.__module__ == "builtins" and getattr(builtins, cls.__name__, None) is not cls:
        return cls  # defined by code run in a namespace without __name__ (trace_code(src, {}))
    root = (cls.__module__ or "").split(".")[0]
    if root in _LIBRARY_ROOTS or root in sys.stdlib_module_names:
        return None
    return cls
