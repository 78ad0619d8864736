"""A sweep summary whose rows mix presets or a metric's options says so: a warning line in
summary.md (and the log), and the columns `preset` and `variants`; rows that agree get neither."""

from __future__ import annotations

import json
import logging

import pandas as pd
from omegaconf import OmegaConf

from gesturebench.reporting.comparability import mixed_conventions
from gesturebench.reporting.tables import write_summary
from gesturebench.tasks.sweep_summary import SweepSummaryCallback

BC_PAPER = {"variant": "paper", "threshold": 0.1, "translation": "keep", "display_scale": None}
BC_EMAGE = {"variant": "emage2024", "threshold": 0.3, "translation": "zero", "display_scale": 0.1}
DIVERSITY = {"joints": "all", "weighting": "frames"}


def job(name: str, preset: str, bc: dict, **extra) -> dict:
    """A fake job row as `collect_jobs` reads it from results.json."""
    return {
        "job": name,
        "status": "ok",
        "model": "m",
        "dataset": "beat2",
        "preset": preset,
        "metrics": {"bc": 0.7, "diversity": 13.0},
        "directions": {"bc": "higher", "diversity": "higher"},
        "skipped": {},
        "options": {"bc": bc, "diversity": DIVERSITY},
        **extra,
    }


def test_rows_with_different_presets_and_variants_get_warnings_and_columns(tmp_path):
    rows = [job("a", "paper", BC_PAPER), job("b", "emage2024", BC_EMAGE)]
    write_summary(tmp_path, rows)
    table = pd.read_csv(tmp_path / "summary.csv")
    assert list(table.columns) == [
        *("job", "status", "model", "dataset", "preset", "variants", "diversity", "bc"),
    ]
    assert list(table["preset"]) == ["paper", "emage2024"]
    assert list(table["variants"]) == [
        "bc.variant=paper; bc.threshold=0.1; bc.translation=keep",
        "bc.variant=emage2024; bc.threshold=0.3; bc.translation=zero",
    ]
    md = (tmp_path / "summary.md").read_text()
    assert "> **Warning:** rows used different metric presets (emage2024, paper)" in md
    assert (
        "> **Warning:** metric bc was computed with different options (variant, threshold, "
        "translation) in different rows" in md
    )
    assert "diversity was computed" not in md  # the same options in both rows
    assert "| # | status | model | dataset | preset | variants |" in md


def test_rows_that_agree_get_no_warning_and_no_extra_column(tmp_path):
    shown_only = {**BC_PAPER, "display_scale": 0.1}  # prints differently, computes the same
    rows = [
        job("a", "paper", BC_PAPER),
        job("b", "paper", shown_only),
        {"job": "c", "status": "failed"},
    ]
    assert mixed_conventions(rows).warnings == []
    write_summary(tmp_path, rows)
    assert "preset" not in pd.read_csv(tmp_path / "summary.csv").columns
    assert "Warning" not in (tmp_path / "summary.md").read_text()


def test_a_row_scored_off_its_pinned_split_is_flagged():
    rows = [
        job("a", "emage2024", BC_EMAGE),
        job("b", "emage2024", BC_EMAGE, protocol_mismatch=["speakers all (pinned: 2)"]),
    ]
    mix = mixed_conventions(rows)
    assert len(mix.warnings) == 1 and mix.warnings[0].startswith("rows b were scored off")
    assert mix.variants == ["", ""]


def test_the_sweep_callback_logs_the_warnings(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("GESTUREBENCH_SWEEP_ID", "unset")
    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}}})
    callback = SweepSummaryCallback()
    callback.on_multirun_start(config)
    for name, preset, bc in (("a", "paper", BC_PAPER), ("b", "emage2024", BC_EMAGE)):
        (tmp_path / name).mkdir()
        doc = job(name, preset, bc, sweep_id=callback.sweep_id)
        (tmp_path / name / "results.json").write_text(json.dumps(doc))
    with caplog.at_level(logging.WARNING, logger="gesturebench.reporting.summary"):
        callback.on_multirun_end(config)
    logged = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("metric bc was computed with different options" in m for m in logged)
    assert "Warning:** rows used different metric presets" in (tmp_path / "summary.md").read_text()
