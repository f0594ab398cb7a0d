"""``kubesched ui``: a web page over a snapshot (simulation runs, what-ifs) or a live cluster.

Modules: :mod:`~kubesched.ui.session` (runs and the live cluster), :mod:`~kubesched.ui.history` and
:mod:`~kubesched.ui.explain` (per-pod explanations computed on request), :mod:`~kubesched.ui.cluster_view`
(node and pod rows), :mod:`~kubesched.ui.reports` (replay reports), :mod:`~kubesched.ui.app` (the
JSON API, documented in docs/ui.md), :mod:`~kubesched.ui.security` and :mod:`~kubesched.ui.server`.
The page itself is ``static/`` (plain HTML, CSS and JavaScript).
"""
