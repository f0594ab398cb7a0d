"""Tables printed to a pipe never cut a name (rich shortens cells to fit its width; a pipe has none)."""

from __future__ import annotations

import io

from kubesched.cli.output import PIPED_WIDTH, table_console
from kubesched.modes.bench.api import ApiResult
from kubesched.modes.bench.report import api_results_table


def test_bench_api_table_keeps_whole_names_when_piped() -> None:
    name = "SchedulingPodAffinityWithAVeryLongName/5000Nodes_10000Pods_and_more"
    console = table_console()  # pytest's stdout is not a terminal
    assert console.width == PIPED_WIDTH
    console.file = io.StringIO()
    console.print(
        api_results_table(
            [ApiResult(name, 5000, 10000, 5000.0, 5000, scheduled_pods=10000, duration_seconds=10.0)]
        )
    )
    text = console.file.getvalue()
    assert "…" not in text
    row = next(line for line in text.splitlines() if name in line)
    assert row.split("│")[1].strip() == name
    assert max(len(line) for line in text.splitlines()) < PIPED_WIDTH  # the table keeps its own width
