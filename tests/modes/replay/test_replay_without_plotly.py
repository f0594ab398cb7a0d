"""Without the optional extra ``report`` (plotly), ``replay`` still writes report.json and pods.csv
and says why report.html is missing; the UI's report view answers 501 with the install hint."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "tests" / "fixtures" / "replay"


@pytest.fixture
def no_plotly(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "plotly" or m.startswith("plotly.")] + ["plotly"]:
        monkeypatch.setitem(sys.modules, name, None)  # "import plotly" now raises ImportError


def test_replay_without_plotly(no_plotly: None, tmp_path: Path) -> None:
    r = CliRunner().invoke(
        main,
        [
            "replay",
            "--trace",
            str(FIX / "tiny.yaml"),
            "--images",
            str(FIX / "catalogue.yaml"),
            "--out",
            str(tmp_path),
        ],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pods.csv", "report.json"]
    assert (
        "note: report.html skipped: report.html and the replay plots need plotly: "
        "pip install 'kubesched[report]'"
    ) in r.stderr


def test_report_figures_name_the_extra(no_plotly: None) -> None:
    from kubesched.modes.report.report_plots import report_figures

    with pytest.raises(ImportError, match=r"pip install 'kubesched\[report\]'"):
        report_figures([])
