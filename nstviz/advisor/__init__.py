"""The advisor (live, above :mod:`nstviz.capture`): proposes remedies, tries them, judges, writes code."""
