"""Output check: do two runs produce the same values?

nonstrict_trace can be silently wrong (values baked in as constants, side effects run once at
trace time), and plain ``torch.compile`` can already change results. This pass compares the
values two runs produced, leaf by leaf, and says where and by how much they differ.

Values are pytrees of tensors and Python values: dicts, lists, tuples, namedtuples,
dataclasses, Hugging Face ``ModelOutput`` (a dict), numbers, strings, numpy arrays, ``None``.
Each leaf gets a path (``return.logits``, ``y[0]``, ``state['k']``) and an
:class:`~nstviz.report.OutputDetail`:

- floating/complex tensors and arrays match when ``|l - r| <= atol + rtol * |r|`` everywhere
  (``torch.isclose``); NaN at the same place counts as equal, ``inf`` must match in sign;
- integer and bool tensors must be exactly equal;
- a dtype or shape mismatch is a mismatch (its note says which);
- values that cannot be compared (arbitrary objects without a usable ``==``) get
  ``match=None`` and a note; they do not make the whole comparison fail.

Everything here is pure: inputs are not modified and no torch state is left changed. One
setting is changed *during* a call: torch's intra-op thread count is set to 1 and restored
afterwards (these passes are memory-bound, and on a busy machine one thread is an order of
magnitude faster); torch code running in another thread at that moment runs single-threaded
for as long.
"""

from nstviz.capture.outputs.compare import compare_outputs
from nstviz.capture.outputs.snapshot import snapshot_outputs
from nstviz.passes.output_verdict import MAX_DETAILS, build_output_check

__all__ = ["MAX_DETAILS", "build_output_check", "compare_outputs", "snapshot_outputs"]
