"""`task=verify`: a finished run re-run from its results.json gives every value again (identical,
exit 0); a value changed by hand differs (both values and the relative difference, exit 3); a
changed dataset file means its values could not be verified (the file named in one line, exit 2);
other package versions are reported, not refused; a results.json that cannot be read is one line
(exit 2); the verified folder is only read.

The finished run is made once per module in this process (mini-BEAT2's linked view, two test
sequences, the fast metrics, no clips, no logger); each verification re-runs it in this process
too; the exit statuses of the real process are in the slow tests."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

import tests.launch
from gesturebench.reporting.results import versions
from gesturebench.runtime.weights import sha256_file
from gesturebench.tasks.verify import (
    DIFFERS,
    EXIT_DIFFERS,
    IDENTICAL,
    NOT_VERIFIED,
    relative_difference,
)
from tests.launch import error_line, isolated, launch, stopped

#: the finished run: mean_pose (values that are not a perfect copy's) on two sequences, on one
#: torch thread as its config records (a process of torch's default thread count may differ in
#: the last bits: the re-run sets the recorded `threads`)
RUN = (
    "threads=1",
    "model=mean_pose",
    "metrics=fast",
    "logger=none",
    "task.render_clips=0",
    "dataset.max_sequences=2",
)


def _view(mini_beat2: Path, root: Path) -> Path:
    """mini-BEAT2's files linked (not copied) into `root` (its marker files too)."""
    root.mkdir(parents=True)
    for entry in sorted(mini_beat2.iterdir()):
        if entry.is_dir():
            (root / entry.name).mkdir()
            for f in entry.iterdir():
                (root / entry.name / f.name).symlink_to(f)
        else:
            (root / entry.name).symlink_to(entry)
    return root


@pytest.fixture(scope="module")
def finished(mini_beat2, tmp_path_factory) -> Path:
    """The folder of a finished run on a linked view of mini-BEAT2."""
    base = tmp_path_factory.mktemp("verified")
    view = _view(mini_beat2, base / "mini")
    run = base / "run"
    with isolated():
        tests.launch.run(*RUN, f"dataset.root={view}", f"hydra.run.dir={run}", encoders=False)
    return run


@pytest.fixture
def copied(finished, tmp_path) -> Path:
    """A copy of the finished run's folder, for a test to change."""
    return Path(shutil.copytree(finished, tmp_path / "copy", symlinks=True))


def _tree(folder: Path) -> dict[str, str]:
    """{relative path: SHA-256} of every file under `folder` (links as their targets' names)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        if path.is_symlink():
            out[key] = f"-> {path.readlink()}"
        elif path.is_file():
            out[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _verify(in_process, run: Path, out: Path, *extra: str):
    return in_process(
        "task=verify", f"task.run={run}", f"hydra.run.dir={out}", *extra, encoders=False
    )


def _results(run: Path) -> dict:
    return json.loads((run / "results.json").read_text())


def _rows(doc: dict) -> dict[str, dict]:
    [run] = doc["runs"]
    return {row["value"]: row for row in run["values"]}


def test_a_finished_run_verifies_identical_and_its_folder_is_only_read(
    in_process, capsys, finished, tmp_path
):
    before = _tree(finished)
    capsys.readouterr()
    doc = _verify(in_process, finished, tmp_path / "v")
    out = capsys.readouterr().out
    assert doc["exit_code"] == 0 and doc["status"] == IDENTICAL
    rows = _rows(doc)
    recorded = _results(finished)
    # every value of the results.json is compared: each metric, interval end and per-sequence value
    assert {f"metrics.{k}" for k in recorded["metrics"]} <= set(rows)
    assert {f"intervals.{k}.{end}" for k in recorded["intervals"] for end in ("lo", "hi")} <= set(
        rows
    )
    sequences = [row["sequence_id"] for row in recorded["per_sequence"]]
    assert len(sequences) == 2 and all(f"per_sequence.{s}.mjd" in rows for s in sequences)
    assert {row["status"] for row in rows.values()} == {IDENTICAL}
    # identical means the same number, recomputed in the re-run's own results.json
    rerun = _results(tmp_path / "v" / "rerun")
    mjd = recorded["metrics"]["mjd"]
    assert rows["metrics.mjd"]["recomputed"] == rerun["metrics"]["mjd"] == mjd
    assert recorded["metrics"]["mjd"] > 0  # mean_pose is no perfect copy: a value worth verifying
    assert json.loads((tmp_path / "v" / "verify.json").read_text()) == doc
    assert f"metrics.mjd  identical  {recorded['metrics']['mjd']!r}" in out
    assert f"{len(rows)} values: {len(rows)} identical" in out
    assert _tree(finished) == before


def test_a_value_changed_by_hand_differs_with_both_values_and_its_relative_difference(
    in_process, capsys, copied, tmp_path
):
    results = _results(copied)
    true_value = results["metrics"]["pck"]
    results["metrics"]["pck"] = 0.5
    (copied / "results.json").write_text(json.dumps(results))
    capsys.readouterr()
    doc = _verify(in_process, copied, tmp_path / "v")
    out = capsys.readouterr().out
    assert doc["exit_code"] == EXIT_DIFFERS and doc["status"] == DIFFERS
    rows = _rows(doc)
    pck = rows["metrics.pck"]
    assert (pck["status"], pck["recorded"], pck["recomputed"]) == (DIFFERS, 0.5, true_value)
    assert pck["relative_difference"] == pytest.approx(abs(true_value - 0.5) / 0.5, rel=1e-12)
    assert [name for name, row in rows.items() if row["status"] != IDENTICAL] == ["metrics.pck"]
    line = next(line for line in out.splitlines() if "metrics.pck" in line)
    assert "differs" in line and "0.5" in line and repr(true_value) in line
    assert f"relative difference {abs(true_value - 0.5) / 0.5:.3g}" in line
    # the edit is seen: the file is no longer the one its run committed
    assert "changed after its run" in out


def test_a_changed_dataset_file_means_its_values_could_not_be_verified_naming_the_file(
    in_process, capsys, finished, mini_beat2, tmp_path
):
    recorded = _results(finished)
    sequence = recorded["per_sequence"][0]["sequence_id"]
    view = _view(mini_beat2, tmp_path / "mini")
    sem = view / "sem" / f"{sequence}.txt"
    text = sem.read_text()
    sem.unlink()
    sem.write_text(text + "\n")
    assert sha256_file(sem) != recorded["inputs"]["dataset"]["files"][f"sem/{sequence}.txt"]
    stop = stopped(
        capsys,
        "task=verify",
        f"task.run={finished}",
        f"hydra.run.dir={tmp_path / 'v'}",
        f"task.overrides=['dataset.root={view}']",
    )
    line = error_line(stop)
    assert f"dataset file {sem} changed" in line and str(finished / "results.json") in line
    doc = json.loads((tmp_path / "v" / "verify.json").read_text())
    assert doc["exit_code"] == 2 and doc["runs"][0]["rerun"] is None  # nothing re-run
    assert {row["status"] for row in _rows(doc).values()} == {NOT_VERIFIED}
    assert not (tmp_path / "v" / "rerun").exists()


def test_other_package_versions_and_unrecorded_inputs_are_reported_not_refused(
    in_process, capsys, copied, tmp_path
):
    results = _results(copied)
    results["versions"]["torch"] = "1.0.0"
    del results["inputs"]  # as a run of an older version wrote it
    (copied / "results.json").write_text(json.dumps(results))
    capsys.readouterr()
    doc = _verify(in_process, copied, tmp_path / "v")
    out = capsys.readouterr().out
    assert doc["exit_code"] == 0 and doc["status"] == IDENTICAL
    now = versions()["torch"]
    assert doc["runs"][0]["environment"] == {"torch": {"recorded": "1.0.0", "now": now}}
    assert f"torch 1.0.0 -> {versions()['torch']}" in out
    assert "records no input hashes" in out and doc["runs"][0]["rerun"]


@pytest.mark.parametrize("damage", ["missing", "not json", "no config"])
def test_a_results_json_that_cannot_be_read_is_one_line(
    in_process, capsys, copied, tmp_path, damage
):
    path = copied / "results.json"
    if damage == "missing":
        path.unlink()
    elif damage == "not json":
        path.write_text('{"metrics": ')
    else:
        path.write_text(json.dumps({"task": "evaluate", "metrics": {}}))
    stop = stopped(capsys, "task=verify", f"task.run={copied}", f"hydra.run.dir={tmp_path / 'v'}")
    line = error_line(stop)
    expected = {
        "missing": f"{copied}: no results.json at or below it",
        "not json": f"{path}: not JSON",
        "no config": f"{path}: records no config",
    }[damage]
    assert line.startswith(f"error: {expected}"), line


def test_a_rerun_that_stops_and_an_override_of_no_recorded_key_are_one_line(
    in_process, capsys, finished, tmp_path
):
    verify = ("task=verify", f"task.run={finished}", f"hydra.run.dir={tmp_path / 'v'}")
    stop = stopped(capsys, *verify, "task.overrides=['dataset.max_sequences=0']")
    line = error_line(stop)
    assert "the re-run stopped: max_sequences must be a positive number" in line, line
    doc = json.loads((tmp_path / "v" / "verify.json").read_text())
    assert doc["exit_code"] == 2 and {r["status"] for r in _rows(doc).values()} == {NOT_VERIFIED}
    stop = stopped(capsys, *verify, "task.overrides=['dataset.rot=/x']")
    assert "task.overrides: 'dataset.rot=/x' is not key=value of a key" in error_line(stop)


def test_a_verify_folder_inside_the_verified_one_is_refused(in_process, capsys, copied):
    stop = stopped(capsys, "task=verify", f"task.run={copied}", f"hydra.run.dir={copied / 'v'}")
    assert "lies in the verified folder" in error_line(stop)


def test_relative_difference_is_against_the_recorded_value():
    assert relative_difference(2.0, 3.0) == 0.5
    assert relative_difference(0.0, 0.25) == 1.0  # against the recomputed where the recorded is 0
    assert relative_difference(0.0, 0.0) == 0.0
    assert relative_difference(None, 1.0) is None


@pytest.mark.slow
def test_the_exit_statuses_of_the_process(finished, mini_beat2, tmp_path):
    """0 identical, 3 a value differs, 2 an input changed or no run: as the real process exits."""
    same = launch("task=verify", f"task.run={finished}", encoders=False)
    assert same.returncode == 0, same.stderr[-2000:]
    assert "values:" in same.stdout and "identical" in same.stdout
    copied = Path(shutil.copytree(finished, tmp_path / "copy", symlinks=True))
    results = _results(copied)
    results["metrics"]["mjd"] *= 2
    (copied / "results.json").write_text(json.dumps(results))
    differs = launch("task=verify", f"task.run={copied}", encoders=False)
    assert differs.returncode == EXIT_DIFFERS, differs.stderr[-2000:]
    assert "metrics.mjd" in differs.stdout and "differs" in differs.stdout
    assert "Traceback" not in differs.stderr
    view = _view(mini_beat2, tmp_path / "mini")
    wav = view / "wave16k" / f"{results['per_sequence'][1]['sequence_id']}.wav"
    data = wav.read_bytes()
    wav.unlink()
    wav.write_bytes(data[:-2] + bytes([data[-2] ^ 1, data[-1]]))  # one sample's lowest bit
    changed = launch(
        "task=verify",
        f"task.run={finished}",
        f"task.overrides=['dataset.root={view}']",
        encoders=False,
    )
    assert f"dataset file {wav} changed" in error_line(changed)
    gone = launch("task=verify", f"task.run={tmp_path / 'nowhere'}", encoders=False)
    assert "no such folder" in error_line(gone)
