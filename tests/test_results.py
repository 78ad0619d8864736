"""The multirun summary: plain metric names in summary.csv, arrows in summary.md, directions in
summary.json."""

from __future__ import annotations

import json

import pandas as pd

from gesturebench.results import write_summary


def test_summary_files_name_metrics_plainly_and_keep_directions_apart(tmp_path):
    rows = [
        {
            "job": "0",
            "status": "ok",
            "model": "a",
            "dataset": "d",
            "metrics": {"mjd": 0.1, "pck": 0.9, "ldlj_rel": -0.2},
            "directions": {"mjd": "lower", "pck": "higher", "ldlj_rel": "zero"},
        },
        {"job": "1", "status": "failed", "model": "b", "dataset": "d", "error": "boom"},
    ]
    write_summary(tmp_path, rows)
    table = pd.read_csv(tmp_path / "summary.csv")
    assert list(table.columns) == [
        "job",
        "status",
        "model",
        "dataset",
        "mjd",
        "pck",
        "ldlj_rel",
        "error",
    ]
    assert table.loc[0, "mjd"] == 0.1 and table.loc[1, "error"] == "boom"
    header = (tmp_path / "summary.md").read_text().splitlines()[0]
    assert "mjd ↓" in header and "pck ↑" in header and "ldlj_rel →0" in header
    assert json.loads((tmp_path / "summary.json").read_text()) == {
        "mjd": "lower",
        "pck": "higher",
        "ldlj_rel": "zero",
    }
