"""The tables of several results: a sweep's summary (its own folder per sweep, the latest beside
the jobs) and the leaderboard across runs (latest complete result per dataset, model, preset and
config hash); headline metrics first with arrows, diagnostics apart without, 4 significant digits
in Markdown, skip reasons and errors as footnotes, 6 in CSV."""

from __future__ import annotations

import json
import os

import pandas as pd
from omegaconf import OmegaConf

from gesturebench.reporting.leaderboard import collect
from gesturebench.reporting.results import PAPER_METRICS
from gesturebench.reporting.tables import write_summary
from gesturebench.run.config import build
from gesturebench.tasks.job import Job
from gesturebench.tasks.sweep_summary import SweepSummaryCallback
from tests.helpers import REPO, composed
from tests.support.results_json import result


def test_summary_splits_headline_from_diagnostics_with_reasons(tmp_path):
    rows = [
        {"job": "0", "status": "ok", **result()},
        {"job": "1", "status": "failed", "model": "b", "dataset": "d", "error": "boom"},
    ]
    write_summary(tmp_path, rows)
    table = pd.read_csv(tmp_path / "summary.csv")
    assert list(table.columns) == [
        *("job", "status", "model", "dataset"),
        *("mjd", "pck", "ldlj_gen", "sgp_invalid", "error"),
    ]
    assert table.loc[1, "error"] == "boom"
    assert "0.123457," in (tmp_path / "summary.csv").read_text()  # 6 significant digits
    md = (tmp_path / "summary.md").read_text()
    headline, diagnostics = md.split("## Diagnostics")
    assert "| job | status | model | dataset | mjd ↓ | pck ↑ |" in headline
    assert "| 0 | ok | a | d | 0.1235 | –[^2] |" in headline
    assert "| 1 | failed[^1] | b | d |  |  |" in headline
    assert "| job | status | model | dataset | ldlj_gen | sgp_invalid |" in diagnostics  # no arrows
    assert "| 0 | ok | a | d | 2.5 | 3 |" in diagnostics
    assert "[^2]: no frames | all masked" in md and "[^1]: failed: boom" in md
    assert json.loads((tmp_path / "summary.json").read_text())["mjd"] == "lower"


def test_each_sweep_keeps_its_own_summary(tmp_path, monkeypatch):
    monkeypatch.setenv("GESTUREBENCH_SWEEP_ID", "unset")
    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}}})
    for i, model in enumerate(("first", "second")):
        callback = SweepSummaryCallback()
        callback.on_multirun_start(config)
        callback.started = f"2026-11-30_0{i}"
        job = tmp_path / f"model={model}"
        job.mkdir()
        doc = result(model, sweep_id=callback.sweep_id)
        (job / "results.json").write_text(json.dumps(doc))
        callback.on_multirun_end(config)
    own = sorted((tmp_path / "sweeps").iterdir())
    assert [p.name[:12] for p in own] == ["2026-11-30_0", "2026-11-30_0"] and len(own) == 2
    assert list(pd.read_csv(own[0] / "summary.csv")["model"]) == ["first"]
    assert list(pd.read_csv(own[1] / "summary.csv")["model"]) == ["second"]
    assert (tmp_path / "summary.md").read_text() == (own[1] / "summary.md").read_text()


def write_result(folder, doc, mtime):
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(doc))
    os.utime(folder / "results.json", (mtime, mtime))


def test_leaderboard_keeps_the_latest_complete_result_per_key(tmp_path):
    outputs, multirun = tmp_path / "outputs", tmp_path / "multirun"
    write_result(outputs / "evaluate" / "old", result("a", mjd=9.0), 1000)
    write_result(multirun / "evaluate" / "d" / "model=a", result("a", mjd=1.0), 2000)
    write_result(outputs / "evaluate" / "newer_incomplete", result("a", complete=False), 3000)
    write_result(outputs / "evaluate" / "paper", result("a", mjd=2.0, preset="paper"), 1500)
    other = result("a", mjd=3.0, config_hash="ffff0000")
    write_result(outputs / "evaluate" / "other_config", other, 500)
    analyze = result("s", config={"task": {"name": "analyze"}})
    write_result(outputs / "analyze" / "x", analyze, 4000)
    rows = collect([outputs, multirun, tmp_path / "absent"])
    assert [(r["preset"], r["config"], r["metrics"]["mjd"]) for r in rows] == [
        ("fast", "abcdef01", 1.0),
        ("fast", "ffff0000", 3.0),
        ("paper", "abcdef01", 2.0),
    ]
    assert rows[0]["run"] == str(multirun / "evaluate" / "d" / "model=a")


def test_leaderboard_task_writes_both_files(tmp_path, capsys):
    write_result(tmp_path / "outputs" / "run", result("a"), 1000)
    write_result(tmp_path / "multirun" / "sweep" / "job", result("b", mjd=None), 1000)
    cfg = composed("task=leaderboard", f"paths.root={tmp_path}")
    assert build(cfg.task)(cfg, Job.of_hydra())["results"] == 2
    out = tmp_path / "outputs" / "leaderboard"  # in outputs/, which git ignores, not the root
    assert "outputs/" in (REPO / ".gitignore").read_text().splitlines()
    md = (out / "leaderboard.md").read_text()
    assert md.startswith("# Leaderboard\n\n## metrics=fast\n\n### Headline metrics\n")
    assert "| d | a | fast | abcdef01 |" in md and "| 0.1235 |" in md
    assert "[^metrics-fast-1]: no frames | all masked" in md and "[^metrics-fast-2]: no value" in md
    assert list(pd.read_csv(out / "leaderboard.csv")["model"]) == ["a", "b"]
    assert "# Leaderboard" in capsys.readouterr().out


def test_tables_show_only_configured_metrics_and_the_leaderboard_separates_presets(tmp_path):
    """A `metrics=fast` run lists the 13 other paper metrics as not computed: no column for them.
    The leaderboard puts each preset in its own section with its own columns and footnotes; a
    caveat is a footnote beside its value."""
    not_computed = {m: None for m in PAPER_METRICS if m not in ("mjd", "pck")}
    fast = result("a", preset="fast")
    fast["metrics"] |= not_computed
    fast["options"] = {"mjd": {}, "pck": {}}
    paper = result("b", preset="paper", config_hash="12345678aa")
    paper["metrics"] |= {**not_computed, "sgp": 1.0}
    paper["caveats"] = {"sgp": "motionless output"}
    paper["directions"] |= {"sgp": "higher"}
    write_summary(tmp_path, [{"job": "0", "status": "ok", **fast}])
    headline = (tmp_path / "summary.md").read_text().split("## Diagnostics")[0]
    assert "| job | status | model | dataset | mjd ↓ | pck ↑ |\n" in headline
    for root in ("outputs", "multirun"):
        write_result(tmp_path / root / "run", fast if root == "outputs" else paper, 1000)
    cfg = composed("task=leaderboard", f"paths.root={tmp_path}")
    build(cfg.task)(cfg, Job.of_hydra())
    md = (tmp_path / "outputs" / "leaderboard" / "leaderboard.md").read_text()
    first, second = md.split("## metrics=paper")
    assert "## metrics=fast" in first and "sgp" not in first.split("### Diagnostics")[0]
    assert "| mjd ↓ | pck ↑ | sgp ↑ |" in second and "| 1[^metrics-paper-2] |" in second
    assert "[^metrics-paper-2]: caveat: motionless output" in second
