"""A run folder's outputs are committed together (`runtime.commit`): a kill at any point leaves the
previous results whole or the new ones whole, never a mix, and no temporary file once the next run
has started; a folder holding another configuration's results is refused before any work; and
`metrics=none` (generate and cache only) ends normally."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from gesturebench.reporting.results import read_results
from gesturebench.runtime import commit
from gesturebench.runtime.commit import MANIFEST, PENDING, recover, staged, verified
from tests.helpers import REPO
from tests.launch import command, launch
from tests.support.kills import killed_at_the_write, leftovers

#: a small scored run: 2 sequences, joint metrics only, no clip, no logger
SMALL = ("dataset.max_sequences=2", "metrics=fast", "logger=none", "task.render_clips=0")


def outputs(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in ("results.json", "per_sequence.csv")}


def agree(folder: Path) -> None:
    """results.json's per-sequence values are per_sequence.csv's."""
    doc = json.loads((folder / "results.json").read_text())
    table = pd.read_csv(folder / "per_sequence.csv")
    pd.testing.assert_frame_equal(
        pd.DataFrame(doc["per_sequence"])[list(table.columns)], table, check_dtype=False
    )


# --- the commit itself ---------------------------------------------------------------------------


def commit_files(folder: Path, files: dict[str, str], carry: bool = False) -> None:
    with staged(folder, carry=carry) as stage:
        for name, text in files.items():
            (stage / name).parent.mkdir(parents=True, exist_ok=True)
            (stage / name).write_text(text)


def test_a_commit_replaces_the_files_together_and_lists_them(tmp_path):
    commit_files(tmp_path, {"a.txt": "1", "sub/b.txt": "1", "old.txt": "1"})
    commit_files(tmp_path, {"a.txt": "2", "sub/b.txt": "2"})
    assert (tmp_path / "a.txt").read_text() == (tmp_path / "sub/b.txt").read_text() == "2"
    assert not (tmp_path / "old.txt").exists()  # listed before, not now: removed
    assert set(json.loads((tmp_path / MANIFEST).read_text())["files"]) == {"a.txt", "sub/b.txt"}
    assert verified(tmp_path, "a.txt") == b"2"
    assert leftovers(tmp_path) == []
    commit_files(tmp_path, {"a.txt": "3"}, carry=True)  # the other files stay listed
    assert verified(tmp_path, "sub/b.txt") == b"2" and verified(tmp_path, "a.txt") == b"3"


def test_a_write_that_fails_leaves_the_previous_files(tmp_path):
    commit_files(tmp_path, {"a.txt": "1", "b.txt": "1"})
    with pytest.raises(RuntimeError), staged(tmp_path) as stage:
        (stage / "a.txt").write_text("2")
        raise RuntimeError("killed between files")
    assert [verified(tmp_path, n) for n in ("a.txt", "b.txt")] == [b"1", b"1"]
    assert leftovers(tmp_path) == []


def test_a_commit_stopped_while_moving_is_finished_by_the_next_and_distrusted_till_then(
    tmp_path, monkeypatch
):
    commit_files(tmp_path, {"a.txt": "1", "b.txt": "1"})
    real, moved = os.replace, list[str]()

    def stop_after_one(src, dst):
        if Path(src).parent.name == PENDING:
            if moved:
                raise KeyboardInterrupt  # a kill after the commit point, one file moved
            moved.append(dst)
        real(src, dst)

    monkeypatch.setattr(commit.os, "replace", stop_after_one)
    with pytest.raises(KeyboardInterrupt):
        commit_files(tmp_path, {"a.txt": "2", "b.txt": "2"})
    monkeypatch.setattr(commit.os, "replace", real)
    assert (tmp_path / "a.txt").read_text() == "2" and (tmp_path / "b.txt").read_text() == "1"
    assert verified(tmp_path, "a.txt") is None and verified(tmp_path, "b.txt") is None
    recover(tmp_path)
    assert [verified(tmp_path, n) for n in ("a.txt", "b.txt")] == [b"2", b"2"]
    assert leftovers(tmp_path) == []


def test_a_file_changed_after_its_commit_is_not_trusted_and_a_manifest_removes_only_its_own(
    tmp_path,
):
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    run = tmp_path / "run"
    commit_files(run, {"results.json": json.dumps({"complete": True})})
    (run / "results.json").write_text(json.dumps({"complete": True, "edited": 1}))
    assert read_results(run / "results.json") is None
    (run / MANIFEST).write_text(json.dumps({"files": {"../outside.txt": "x"}}))
    commit_files(run, {"results.json": "{}"})
    assert outside.read_text() == "keep"


# --- through a run -------------------------------------------------------------------------------


def test_a_folder_with_another_configurations_results_is_refused_before_any_work(
    tmp_path, in_process, capsys, monkeypatch
):
    folder = f"hydra.run.dir={tmp_path / 'run'}"
    first = in_process(*SMALL, folder, encoders=False)
    before = outputs(tmp_path / "run")
    from gesturebench.tasks import evaluate

    def no_work(*args, **kwargs):
        raise AssertionError("the refused run started its work")

    monkeypatch.setattr(evaluate, "score", no_work)
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        in_process(*SMALL, folder, "model=mean_pose", encoders=False)
    assert stop.value.code == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "holds the results of another configuration" in line
    assert "model=ground_truth" in line and "model=mean_pose" in line
    assert first["config_hash"][:8] in line
    assert outputs(tmp_path / "run") == before
    # the same configuration resumes there (no work: score would fail)
    assert in_process(*SMALL, folder, encoders=False)["config_hash"] == first["config_hash"]


def test_metrics_none_generates_and_says_no_metrics(tmp_path, in_process, capsys):
    folder = tmp_path / "run"
    overrides = ("dataset.max_sequences=2", "logger=none", "task.render_clips=0")
    results = in_process(
        *overrides, "metrics=none", "model=mean_pose", f"hydra.run.dir={folder}", encoders=False
    )
    assert "no metrics configured (metrics=none)" in capsys.readouterr().out
    written = read_results(folder / "results.json")
    assert written is not None and written["complete"]
    assert all(v is None for v in written["metrics"].values()) and results["model"] == "mean_pose"


# --- real processes: the exit status and SIGKILL -------------------------------------------------


@pytest.mark.slow
def test_sigkill_during_the_results_write_leaves_the_previous_files_and_no_temporary(tmp_path):
    folder = tmp_path / "run"
    overrides = (*SMALL, f"hydra.run.dir={folder}")
    assert launch(*overrides, encoders=False).returncode == 0
    before = outputs(folder)
    cmd, env = command(*overrides, "resume=false")
    killed = subprocess.run(
        [sys.executable, "-c", killed_at_the_write(REPO / "launch.py"), *cmd[2:]],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert killed.returncode == -9, killed.stderr[-3000:]
    assert outputs(folder) == before
    agree(folder)
    assert read_results(folder / "results.json") is not None
    assert launch(*overrides, encoders=False).returncode == 0  # resumes; cleans the left-over
    assert outputs(folder) == before
    assert leftovers(folder) == []


@pytest.mark.slow
def test_the_exit_status_of_a_refused_folder_and_of_metrics_none(tmp_path):
    folder = f"hydra.run.dir={tmp_path / 'run'}"
    none = launch(*SMALL, folder, "metrics=none", "model=mean_pose", encoders=False)
    assert none.returncode == 0, none.stderr[-3000:]
    assert "no metrics configured" in none.stdout
    refused = launch(*SMALL, folder, encoders=False)
    assert refused.returncode == 2
    assert "holds the results of another configuration" in refused.stderr.strip().splitlines()[-1]
