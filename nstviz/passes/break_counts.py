"""Two names of :mod:`nstviz.report.facts`, still imported from here by ``advisor/propose.py``.

Delete this module once that file imports them from :mod:`nstviz.report.facts`, the module that
defines them, as everything else does.
"""

from __future__ import annotations

from nstviz.report.facts import rank_breaks, short_counts

__all__ = ["rank_breaks", "short_counts"]
