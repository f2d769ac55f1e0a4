"""Pure passes over the Report model: each takes model values and returns new ones.

They import only :mod:`nstviz.report`, the torch-free :mod:`nstviz.tracing` rules and the shared
leaves (:mod:`nstviz.errors`, ``_where``, ``_gb_ids``). :mod:`~nstviz.passes.assemble` applies them
in order to what a capture produced; see ``docs/architecture.md`` for the list.
"""
