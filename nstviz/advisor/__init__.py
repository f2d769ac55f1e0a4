"""The advisor (live, above :mod:`nstviz.capture`): proposes remedies, tries them, judges, writes code.

- :mod:`.propose`: candidates for a run's breaks, from their stacks and the sources;
- :mod:`.precheck`: why a candidate cannot be tried (name, markability, call sites, annotations);
- :mod:`.judge`: what one attempt did compared with the marks kept before it;
- :mod:`.search`: the loop (:func:`~nstviz.advisor.search.search`), driving the capture's
  :class:`~nstviz.capture.trials.Trials` (the :mod:`.trials` protocol) and returning the live
  marks it kept; its steps are :mod:`.steps` on the typed :mod:`.state`, its attempts
  :class:`~nstviz.advisor.attempt.Attempt`;
- :mod:`.remedies`: the ``torch._dynamo.config`` flags a break hints at;
- :mod:`.code`: paste-ready code for the recommendation.
"""
