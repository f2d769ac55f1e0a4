"""What a function reads that is not one of its inputs, found from its bytecode.

``torch._dynamo.nonstrict_trace`` runs the marked function once, at trace time, with fake
tensors, and records the tensor operations it performs. Everything else the function looks at
is evaluated then and baked into the graph **without a guard**:

- module globals and closure cells holding numbers, strings, containers or tensors: rebinding
  them later (``SCALE = ...``, ``CFG["k"] = ...``) is not seen by the compiled code (measured
  on torch 2.13: stale results, no error, no recompile). In-place updates of a *tensor* are
  seen, because the tensor itself is lifted into the graph;
- attributes of ``self`` (numbers, containers, plain tensor attributes): same as globals;
- Python-level randomness and clocks (``random.*``, ``numpy.random.*``, ``time.*``): drawn once,
  so every call of the compiled code returns the first call's values;
- assignments to globals, nonlocals or ``self`` attributes and in-place changes of global
  containers: they happen once, at trace time, not on every call.

:func:`find_non_input_reads` lists these from the code object (no source needed), following
calls into other plain Python functions and methods of ``self`` a few levels deep, because
nonstrict_trace traces through them too. It is a static scan: it sees names, not values that
flow through arguments, and it may list a read on a path the function never takes.
"""

from nstviz.capture.reads.scan import find_non_input_reads

__all__ = ["find_non_input_reads"]
