"""What replay and start-up reports share: per-pod timelines and their measurements
(``metrics.py``), the run outcome (``result.py``), and the report writers (``report_*.py``)."""
