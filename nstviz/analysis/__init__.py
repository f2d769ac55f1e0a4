"""Pure passes over the Report model: each takes model values and returns new ones.

:mod:`~nstviz.analysis.assemble` applies them in order to what a capture produced:

- :mod:`~nstviz.analysis.provenance`: non-strict regions and the ATen nodes inlined from them.
- :mod:`~nstviz.analysis.marks`: which marked functions took effect, and why not.
- :mod:`~nstviz.analysis.break_diff`: resolved / remaining / introduced breaks (by ``Break.id``).
- :mod:`~nstviz.analysis.counts`: the numbers per run (the one definition).
- :mod:`~nstviz.analysis.output_check`: output comparison and verdict.
- :mod:`~nstviz.analysis.notes`: warnings for the user.
- :mod:`~nstviz.analysis.headline`: the headline chips (the one definition).

:mod:`~nstviz.analysis.improvement` is the one predicate of an improvement (fewer graphs, ...)
that the headline and the advisor share.

Also :mod:`~nstviz.analysis.upgrade` (reading schema version 1), ``free_reads`` (non-input
reads of a function) and ``advisor`` (proposes, tries and judges candidates).
"""
