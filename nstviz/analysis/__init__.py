"""Pure passes over the Report model: each takes model values and returns new ones.

- :mod:`~nstviz.analysis.break_diff`: resolved / remaining / introduced breaks.
- :mod:`~nstviz.analysis.provenance`: non-strict regions and the ATen nodes inlined from them.
- :mod:`~nstviz.analysis.counts`: headline numbers per run.
- ``output_check``, ``free_reads``, ``advisor``: output comparison, non-input reads, the advisor.
"""
