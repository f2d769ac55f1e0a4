"""Capture engine: the kernel-side hooks into torch, the runs, and live objects -> plain values.

- :mod:`~nstviz.capture.subject`: what is run (a callable, or code in a namespace).
- :mod:`~nstviz.capture.plan`: which runs are made (and the progress totals).
- :mod:`~nstviz.capture.session`: runs a subject by a plan, hands plain values to
  :func:`nstviz.passes.assemble.assemble`.

- :mod:`~nstviz.capture._torch_compat`: the only module touching torch's private API.
- :mod:`~nstviz.capture.trace_log`: collects the structured trace (``torch.__trace``) per run.
- :mod:`~nstviz.capture.recorder`: recording backends (Dynamo + ATen graphs) for every compile.
- :mod:`~nstviz.capture.marking`: resolves ``nonstrict=`` specs and marks functions by id.
- :mod:`~nstviz.capture.state`: snapshot/restore of everything nstviz touches.
- :mod:`~nstviz.capture.namespace`: rolls the user's namespace back between runs.
- :mod:`~nstviz.capture.convert`: GraphModules, trace events and errors -> Report values.
- :mod:`~nstviz.capture.runner`: executes one run and returns its :class:`~nstviz.report.Run`.
"""
