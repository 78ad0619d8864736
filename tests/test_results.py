"""The tables of several results: a sweep's summary (its own folder per sweep, the latest beside
the jobs) and the leaderboard across runs (latest complete result per dataset, model, preset and
config hash); headline metrics first with arrows, diagnostics apart without, 4 significant digits
in Markdown, skip reasons and errors as footnotes, 6 in CSV."""

from __future__ import annotations

import json
import logging
import os

import pandas as pd
from omegaconf import OmegaConf

from gesturebench.reporting.leaderboard import collect, write_leaderboard
from gesturebench.reporting.results import PAPER_METRICS, RESULTS_FILE, UNREADABLE
from gesturebench.reporting.summary import write_sweep_summary
from gesturebench.reporting.tables import write_summary
from gesturebench.run.config import build
from gesturebench.tasks.job import Job
from gesturebench.tasks.sweep_summary import SweepSummaryCallback
from tests.helpers import REPO, composed
from tests.support.results_json import result
from tests.support.unreadable_results import PROBLEMS, committed, unreadable_runs


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
    # each job by its number, its folder listed below the tables
    assert "| # | status | model | dataset | mjd ↓ | pck ↑ |" in headline
    assert "| 1 | ok | a | d | 0.1235 | –[^2] |" in headline
    assert "| 2 | failed[^1] | b | d |  |  |" in headline
    assert "| # | status | model | dataset | ldlj_gen | sgp_inv |" in diagnostics  # no arrows
    assert "| 1 | ok | a | d | 2.5 | 3 |" in diagnostics
    assert "Metric names: sgp_inv = sgp_invalid." in diagnostics
    assert "Job folders:\n\n1. `0`\n2. `1`\n" in diagnostics
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
    assert "| # | dataset | model | config | mjd ↓ | pck ↑ |" in md  # the preset: its heading
    assert "| 1 | d | a | abcdef01 | 0.1235 | –[^1-1] |" in md
    assert "[^1-1]: no frames | all masked" in md and "[^1-2]: no value" in md
    runs = [str(tmp_path / "outputs" / "run"), str(tmp_path / "multirun" / "sweep" / "job")]
    assert f"Run folders:\n\n1. `{runs[0]}`\n2. `{runs[1]}`\n" in md
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
    assert "| # | status | model | dataset | mjd ↓ | pck ↑ |\n" in headline
    for root in ("outputs", "multirun"):
        write_result(tmp_path / root / "run", fast if root == "outputs" else paper, 1000)
    cfg = composed("task=leaderboard", f"paths.root={tmp_path}")
    build(cfg.task)(cfg, Job.of_hydra())
    md = (tmp_path / "outputs" / "leaderboard" / "leaderboard.md").read_text()
    first, second = md.split("## metrics=paper")
    assert "## metrics=fast" in first and "sgp" not in first.split("### Diagnostics")[0]
    assert "| mjd ↓ | pck ↑ | sgp ↑ |" in second and "| 1[^2-2] |" in second
    assert "[^2-2]: caveat: motionless output" in second


def test_an_unreadable_results_json_is_named_and_marked_in_the_leaderboard(tmp_path, caplog):
    """The one reader of run folders (`read_run_file`): each kind of results.json that cannot be
    taken is named in a warning line (file and problem) and gets a row marked unreadable, listed
    under "Not read" in leaderboard.md and with its status and error in leaderboard.csv."""
    committed(tmp_path / "good", result("a"))
    paths = unreadable_runs(tmp_path, result("b"))
    with caplog.at_level(logging.WARNING, "gesturebench.reporting.results"):
        rows = collect([tmp_path])
    assert [r["model"] for r in rows if r["status"] == "ok"] == ["a"]
    unread = {r["run"]: r for r in rows if r["status"] == UNREADABLE}
    assert sorted(unread) == sorted(str(p.parent) for p in paths.values())
    for kind, path in paths.items():
        assert unread[str(path.parent)]["error"].startswith(f"{path}: {PROBLEMS[kind]}")
        warning = f"{path}: {PROBLEMS[kind]}"
        assert [r.getMessage() for r in caplog.records if r.getMessage().startswith(warning)]
    write_leaderboard(tmp_path / "board", rows)
    md = (tmp_path / "board" / "leaderboard.md").read_text()
    assert f"## Not read (4 {RESULTS_FILE})" in md
    assert all(f"- {unread[str(p.parent)]['error']}" in md for p in paths.values())
    csv = pd.read_csv(tmp_path / "board" / "leaderboard.csv")
    assert sorted(csv["status"]) == ["ok", *[UNREADABLE] * 4]


def test_an_unreadable_results_json_is_named_and_marked_in_the_sweep_summary(
    tmp_path, monkeypatch, caplog
):
    """A job folder whose results.json cannot be read gets a row marked unreadable (its footnote
    names the file and the problem) and a warning line; it does not fail the sweep."""
    committed(tmp_path / "model=a", result("a", sweep_id="s1"))
    paths = unreadable_runs(tmp_path, result("b", sweep_id="s1"))
    (tmp_path / "model=c").mkdir()
    (tmp_path / "model=c" / "error.json").write_text("{oops")
    with caplog.at_level(logging.WARNING):
        summary = write_sweep_summary(tmp_path, "s1", "2026-12-06_00-00-00")
    assert summary is not None and not summary.failed
    table = pd.read_csv(summary.tables["summary"])
    assert dict(zip(table["job"], table["status"])) == {
        "model=a": "ok",
        **dict.fromkeys(paths, UNREADABLE),
        "model=c": UNREADABLE,
    }
    md = (summary.folder / "summary.md").read_text()
    for kind, path in paths.items():
        assert f"unreadable: {path}: {PROBLEMS[kind]}" in md
        assert f"{path}: {PROBLEMS[kind]}" in caplog.text
    assert f"unreadable: {tmp_path / 'model=c' / 'error.json'}: not a readable error.json" in md
    assert "| unreadable[^" in md
