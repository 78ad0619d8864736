"""The Python API: `gesturebench.evaluate` composes the command line's config (same results,
same config hash) and `load_results` reads runs as a DataFrame; the example of docs/api.md runs as
written."""

from __future__ import annotations

import json
import logging
import re

import pandas as pd
import pytest

import gesturebench
from gesturebench import api
from gesturebench.reporting.results import PAPER_METRICS, UNREADABLE
from gesturebench.runtime.errors import CheckpointError, DataError
from tests.helpers import CONF, REPO
from tests.support.unreadable_results import PROBLEMS, committed, unreadable_runs


def doc_example() -> str:
    text = (REPO / "docs" / "api.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)[0]


@pytest.fixture
def user_folder(tmp_path, monkeypatch, mini_beat2, sandbox):
    """A working folder whose data/ is the session's generated mini-BEAT2 and whose body model is
    the checkout's; the packaged configs are this checkout's conf/."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / mini_beat2.name).symlink_to(mini_beat2, target_is_directory=True)
    (tmp_path / "checkpoints").mkdir()
    body_models = sandbox.checkpoints / "body_models"
    if body_models.exists():
        (tmp_path / "checkpoints" / "body_models").symlink_to(body_models.resolve())
    monkeypatch.chdir(tmp_path)
    run = api.evaluate
    monkeypatch.setattr(
        api, "evaluate", lambda *a, **k: run(*a, "task.render_clips=0", config_dir=CONF, **k)
    )
    return tmp_path


def test_api_doc_example_runs_and_matches_results_json(user_folder, capsys):
    namespace: dict = {}
    exec(doc_example(), namespace)
    results, table = namespace["results"], namespace["table"]
    (run,) = list((user_folder / "outputs" / "evaluate").glob("*/*/results.json"))
    assert json.loads(run.read_text())["metrics"] == results["metrics"]
    assert results["model"] == "mean_pose" and results["preset"] == "fast"
    assert results["skipped"]["fgd"].startswith("not computed")
    assert list(table.columns[:5]) == api.COLUMNS
    assert table.loc[0, "mjd"] == results["metrics"]["mjd"] and len(table) == 1
    diagnostics = [m for m in results["metrics"] if m not in PAPER_METRICS]
    bounded = results["intervals"]  # each value followed by its interval where it has one
    configured = [m for m in PAPER_METRICS if m in results["options"]]  # not the 13 not computed
    assert configured == ["mjd", "pck"] and results["caveats"] == {}
    expected = [
        c
        for m in (*configured, *diagnostics)
        for c in (m, f"{m}_lo", f"{m}_hi")
        if c == m or m in bounded
    ]
    assert list(table.columns[5:]) == expected  # headline first
    assert (
        table.loc[0, "mjd_lo"] == bounded["mjd"][0] and table.loc[0, "mjd_hi"] == bounded["mjd"][1]
    )
    sequences = gesturebench.load_results(run, per_sequence=True)
    assert len(sequences) == len(results["per_sequence"])
    assert sequences["mjd"].tolist() == [r["mjd"] for r in results["per_sequence"]]
    assert "mean_pose on mini_beat2:" in capsys.readouterr().out


def test_bad_input_raises_what_the_command_line_prints(user_folder):
    with pytest.raises(CheckpointError, match=r"^model=precomputed: model\.dir is not set"):
        gesturebench.evaluate("model=precomputed", metrics="fast", logger="none")


def test_keyword_overrides_are_hydra_syntax():
    assert api.override("resume", False) == "resume=false"
    assert api.override("dataset.max_sequences", None) == "dataset.max_sequences=null"
    assert api.override("dataset.speakers", [2, 4]) == "dataset.speakers=[2,4]"
    assert api.override("model.dir", "/out") == "model.dir=/out"


def test_load_results_skips_incomplete_runs(tmp_path):
    for name, complete in (("a", True), ("b", False)):
        (tmp_path / name).mkdir()
        doc = {"model": name, "dataset": "d", "metrics": {"mjd": 1.0}, "complete": complete}
        (tmp_path / name / "results.json").write_text(json.dumps(doc))
    table = gesturebench.load_results(tmp_path)
    assert isinstance(table, pd.DataFrame) and table["model"].tolist() == ["a"]


def test_load_results_names_the_path_that_holds_no_run(tmp_path):
    missing = tmp_path / "no" / "such" / "path"
    with pytest.raises(DataError, match=rf"^{re.escape(str(missing))}: no such file or folder$"):
        gesturebench.load_results(missing)
    with pytest.raises(DataError, match=rf"^{re.escape(str(tmp_path))}: no results\.json in"):
        gesturebench.load_results(tmp_path)  # a folder, but no run below it
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "results.json").write_text(json.dumps({"model": "a", "complete": False}))
    with pytest.raises(DataError, match=r": 1 results\.json, none complete"):
        gesturebench.load_results(tmp_path)


def test_load_results_names_and_marks_an_unreadable_results_json(tmp_path, caplog):
    """The reader of the sweep summary and the leaderboard: each results.json that cannot be
    taken is named in a warning line (file and problem) and its row marked unreadable, with the
    problem under `error`; the readable runs are read as ever."""
    committed(
        tmp_path / "good", {"model": "a", "dataset": "d", "metrics": {"mjd": 1.0}, "complete": True}
    )
    paths = unreadable_runs(tmp_path, {"model": "b", "dataset": "d", "complete": True})
    with caplog.at_level(logging.WARNING, "gesturebench.reporting.results"):
        table = gesturebench.load_results(tmp_path)
    assert table.loc[table["status"] == "ok", "model"].tolist() == ["a"]
    assert table.loc[table["status"] == "ok", "mjd"].tolist() == [1.0]
    unread = table[table["status"] == UNREADABLE].set_index("run")
    assert sorted(unread.index) == sorted(str(p.parent) for p in paths.values())
    for kind, path in paths.items():
        assert unread.loc[str(path.parent), "error"].startswith(f"{path}: {PROBLEMS[kind]}")
        assert pd.isna(unread.loc[str(path.parent), "mjd"])
        assert f"{path}: {PROBLEMS[kind]}" in caplog.text
    # a single unreadable file given by its path: the same row, not an exception
    alone = gesturebench.load_results(paths["not_json"])
    assert alone["status"].tolist() == [UNREADABLE]
