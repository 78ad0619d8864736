"""The tables of several results: a sweep's summary (its own folder per sweep, the latest beside
the jobs) and the leaderboard across runs (latest complete result per dataset, model, preset and
config hash); headline metrics first with arrows, diagnostics apart without, 4 significant digits
in Markdown, skip reasons and errors as footnotes, 6 in CSV."""

from __future__ import annotations

import json
import logging
import os

import pandas as pd
import pytest
from omegaconf import OmegaConf

from gesturebench.reporting.comparability import MARK, MARK_LEGEND, self_compared
from gesturebench.reporting.leaderboard import collect, write_leaderboard
from gesturebench.reporting.results import (
    PAPER_METRICS,
    RESULTS_FILE,
    UNREADABLE,
    build_results,
    json_text,
)
from gesturebench.reporting.summary import write_sweep_summary
from gesturebench.reporting.tables import TABLE_WIDTH, short_name, short_names, write_summary
from gesturebench.run.config import build
from gesturebench.tasks.job import Job
from gesturebench.tasks.sweep_summary import SweepSummaryCallback
from tests.helpers import REPO, composed
from tests.support.results_json import result
from tests.support.unreadable_results import PROBLEMS, committed, unreadable_runs
from tests.support.wide_results import COPIES, MODELS, PAPER_VALUES, legend, tables, wide_row


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


def test_the_tables_of_a_three_model_sweep_of_the_default_preset_fit_120_columns(tmp_path):
    """summary.md and leaderboard.md of 3 models scored with `metrics=paper`, every value as wide
    as 4 significant digits and an interval make it: no table line over `TABLE_WIDTH`; read back
    through the legend of short names, every value of every model is in exactly one cell (its
    value and interval, `MARK` exactly where it partly compares the reference with itself); the
    run folders are in the list below, not in the rows."""
    folders = [f"model={m},stats.bootstrap=1000,dataset.max_sequences=null" for m in MODELS]
    docs = [wide_row(m, k) for k, m in enumerate(MODELS)]
    write_summary(tmp_path / "s", [{"job": f, "status": "ok", **d} for f, d in zip(folders, docs)])
    runs = [str(tmp_path / "multirun" / "evaluate" / "mini_beat2" / f) for f in folders]
    board = [{**d, "run": r, "config": d["config_hash"][:8]} for r, d in zip(runs, docs)]
    write_leaderboard(tmp_path / "b", board)
    values = [n for names, _ in PAPER_VALUES.values() for n in names]
    for md, where in (
        ((tmp_path / "s" / "summary.md").read_text(), folders),
        ((tmp_path / "b" / "leaderboard.md").read_text(), runs),
    ):
        lines = md.splitlines()
        table_lines = [line for line in lines if line.startswith("|")]
        assert max(map(len, table_lines)) <= TABLE_WIDTH, max(table_lines, key=len)
        assert len([line for line in lines if line.startswith("| #")]) > 2  # split to fit
        assert not [f for f in where for line in table_lines if f in line]
        assert "\n".join(f"{i}. `{f}`" for i, f in enumerate(where, 1)) in md
        names = legend(md)
        assert "dens" in names and names["fc"] == "foot_contact"
        cells: dict[tuple[str, str], str] = {}
        for table in tables(md):
            for number, row in table.items():
                for header, text in row.items():
                    if header in ("#", "status", "model", "dataset", "config"):
                        continue
                    short = header.split(" ")[0]
                    key = (number, names.get(short, short))
                    assert key not in cells, key
                    cells[key] = text
        assert {m for _, m in cells} == set(values)
        for k, doc in enumerate(docs):
            for name in values:
                text = cells[str(k + 1), name]
                value = doc["metrics"][name]
                if value is None:
                    assert text.startswith("–[^"), text
                    continue
                lo, hi = doc["intervals"][name]
                assert text.startswith(f"{value:.4g} [{lo:.4g}, {hi:.4g}]"), text
                assert (MARK in text) == (name in doc["self_compared"]), (name, text)
        assert " ".join(MARK_LEGEND.split()) in " ".join(md.split())
        assert f": {COPIES}" in md  # the footnote of a marked value says why


def test_a_leaderboard_marks_a_value_that_partly_compares_the_reference_with_itself(tmp_path):
    """Through `collect`: a run's `self_compared` values carry `MARK` and its footnote, with the
    legend line; a run without marks has no legend line."""
    doc = result("a", mjd=0.5, self_compared={"mjd": "copies trans"})
    doc["skipped"] = {"pck": "no frames", "mjd": "copies trans"}
    write_result(tmp_path / "outputs" / "run", doc, 1000)
    write_leaderboard(tmp_path / "b", collect([tmp_path / "outputs"]))
    md = (tmp_path / "b" / "leaderboard.md").read_text()
    assert f"| 0.5{MARK}[^1-1] |" in md and "[^1-1]: copies trans" in md
    assert MARK_LEGEND.split(":")[0] in md
    write_result(tmp_path / "plain" / "run", result("b"), 1000)
    write_leaderboard(tmp_path / "c", collect([tmp_path / "plain"]))
    assert MARK not in (tmp_path / "c" / "leaderboard.md").read_text()


@pytest.mark.slow
def test_the_listed_paper_values_are_the_default_presets():
    """`PAPER_VALUES` (the width test's columns) is what `metrics=paper`, the default, builds."""
    cfg = composed()
    assert "metrics: paper" in (REPO / "conf" / "config.yaml").read_text()
    built = {}
    for name, node in cfg.metrics.items():
        if name == "protocol":
            continue
        metric = build(node)
        built[name] = (tuple(metric.value_names), metric.direction)
    assert built == PAPER_VALUES


class _Copier:
    """A model source whose notes say a copied field enters fgd (which has a value) and
    foot_contact (which has none)."""

    name = "copier"

    def describe(self) -> dict:
        return {"copied_fields": ["trans"]}

    def skip_notes(self, metrics) -> dict:
        return {
            m: "partly compares the reference with itself: copier copies trans"
            for m in ("fgd", "foot_contact")
        }


def test_results_json_lists_the_values_that_partly_compare_the_reference_with_itself():
    """`self_compared`: the model's notes on values that have a number (fgd), not on a value
    skipped anyway (foot_contact: its own reason, then the note, under `skipped`)."""
    raw = {
        "metrics": {"fgd": 0.5, "foot_contact": None, "mjd": 0.1},
        "skipped": {"foot_contact": "no vertices"},
        "intervals": {},
        "replicates": {},
        "per_sequence": [],
        "timings": {},
    }
    dataset = type("D", (), {"ids": []})()
    doc = build_results({}, "h", "d", "paper", None, dataset, _Copier(), {}, raw)
    note = "partly compares the reference with itself: copier copies trans"
    assert doc["self_compared"] == {"fgd": note}
    assert doc["skipped"]["fgd"] == note
    assert doc["skipped"]["foot_contact"] == f"no vertices; {note}"
    assert self_compared(doc) == {"fgd": note}
    assert json.loads(json_text(doc))["self_compared"] == {"fgd": note}


def test_short_names_are_unique_and_never_another_columns_name():
    """A fixed short name, the first word and initials of a long name, a short name kept; two
    names that would share a short name, or a short name that is another column's, keep theirs."""
    names = ["density", "sgp_class_beat", "mjd", "my_long_metric", "my_lazy_metric"]
    assert short_names(names) == {
        "density": "dens",
        "sgp_class_beat": "sgp_c_b",
        "mjd": "mjd",
        "my_long_metric": "my_long_metric",  # both would be my_l_m
        "my_lazy_metric": "my_lazy_metric",
    }
    assert short_names(["diversity", "div"]) == {"diversity": "diversity", "div": "div"}
    assert short_name("a_very_long_name_") == "a_v_l_n"
