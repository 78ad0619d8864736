"""The README's main job, sweeps, resume, a failing sweep job and DDP. Runs in the test process,
except a real `launch.py -m` sweep and the two DDP processes."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from gesturebench.reporting.results import PAPER_METRICS
from tests.conftest import SWEEP_ARGS, SWEEP_MODELS
from tests.launch import launch, results

pytestmark = pytest.mark.slow

CONTRACT_KEYS = {
    "task",
    "model",
    "dataset",
    "metrics",
    "directions",
    "skipped",
    "per_sequence",
    "encoders",
    "config",
    "versions",
}


def ok(proc):
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


# identity values of ground truth against itself (docs/metrics.md); the rest must at least be
# numbers
IDENTITY = {
    "mjd": 0.0,
    "pck": 1.0,
    "chamfer": 0.0,
    "hausdorff": 0.0,
    "dice": 1.0,
    "foot_contact": 0.0,
    "ldlj_rel": 0.0,
    "coverage": 1.0,
    "density": 1.0,
}


def test_main_job_ground_truth_with_wandb(tmp_path, in_process):
    """The README's main command (all metrics of the paper) for ground truth on mini-BEAT2."""
    out = tmp_path / "run"
    in_process(f"hydra.run.dir={out}")
    res = results(out)
    assert set(res) >= CONTRACT_KEYS
    assert set(PAPER_METRICS) <= set(res["metrics"])
    metrics = res["metrics"]
    assert all(metrics[k] is not None for k in PAPER_METRICS), res["skipped"]
    for key, value in IDENTITY.items():
        assert metrics[key] == pytest.approx(value, abs=1e-9), key
    assert metrics["fgd"] == pytest.approx(0.0, abs=1e-6) and metrics["sgp"] >= 0.9
    assert metrics["bc"] == pytest.approx(metrics["bc_ref"]) and metrics["sc"] == pytest.approx(
        metrics["sc_ref"]
    )
    assert set(res["encoders"]) >= {"motion_ae", "text_motion"}
    assert all(len(info["sha256"]) == 64 for info in res["encoders"].values())
    assert res["per_sequence"] and all(row["chamfer"] == 0.0 for row in res["per_sequence"])
    assert (out / "per_sequence.csv").exists()
    assert list((out / "clips").glob("*.mp4"))
    runs = list((out / "wandb").glob("offline-run-*"))
    assert len(runs) == 1 and list(runs[0].glob("*.wandb"))


def test_sweep_summary_and_resume(basic_sweep, in_process, capsys):
    """The real multirun (basic_sweep, a `launch.py -m` process), then the same sweep again in
    the test process, which skips its three complete jobs."""
    sweep, first = basic_sweep
    ok(first)
    table = pd.read_csv(sweep / "summary.csv")
    assert len(table) == 3 and set(table["status"]) == {"ok"}
    mjd = dict(zip(table["model"], table["mjd"]))
    assert mjd["ground_truth"] == 0.0 and mjd["mean_pose"] > 0 and mjd["random_clip"] > 0
    coverage = dict(zip(table["model"], table["coverage"]))
    # a copy covers every reference neighbourhood, one pose fewer than clips of other motion
    assert coverage["ground_truth"] == 1.0 > coverage["random_clip"] > coverage["mean_pose"]
    assert "↑" in (sweep / "summary.md").read_text()
    before = {p: p.stat().st_mtime_ns for p in sweep.glob("*/per_sequence.csv")}
    capsys.readouterr()
    assert in_process("-m", SWEEP_MODELS, *SWEEP_ARGS, f"hydra.sweep.dir={sweep}") == 0
    again = capsys.readouterr()
    assert (again.err + again.out).count("skipped (resume=true)") == 3
    assert {p: p.stat().st_mtime_ns for p in sweep.glob("*/per_sequence.csv")} == before
    assert len(pd.read_csv(sweep / "summary.csv")) == 3


def test_a_sweep_job_that_raises_is_recorded_and_the_summary_still_written(
    tmp_path, in_process, capsys
):
    sweep = tmp_path / "sweep"
    code = in_process(
        "-m",
        "model=random_clip",
        "model.seed=0,-1",
        "metrics=fast",
        "logger=none",
        "dataset.max_sequences=2",
        "task.render_clips=0",
        f"hydra.sweep.dir={sweep}",
        encoders=False,
    )
    assert code != 0
    assert "error: unexpected ValueError: expected non-negative integer" in capsys.readouterr().err
    (failed,) = [p.parent for p in sweep.glob("*/error.json")]
    assert "model.seed=-1" in failed.name
    error = json.loads((failed / "error.json").read_text())
    assert (
        error["error_type"] == "ValueError"
        and "Traceback" in (failed / "traceback.txt").read_text()
    )
    table = pd.read_csv(sweep / "summary.csv")
    assert sorted(table["status"]) == ["failed", "ok"]
    assert "non-negative" in table.set_index("status").loc["failed", "error"]


def test_ddp_two_processes_equal_one(tmp_path, in_process):
    common = (
        "model=perturbed",
        "model.level=0.2",
        "metrics=fast",
        "logger=none",
        "dataset.max_sequences=3",
        "task.render_clips=0",
    )
    in_process(*common, f"hydra.run.dir={tmp_path / 'single'}")
    ok(launch(*common, "trainer=ddp", "trainer.devices=2", f"hydra.run.dir={tmp_path / 'ddp'}"))
    single, ddp = results(tmp_path / "single"), results(tmp_path / "ddp")
    assert single["metrics"]["mjd"] > 0
    for key in ("mjd", "pck"):
        assert ddp["metrics"][key] == pytest.approx(single["metrics"][key], rel=1e-9)
    assert set(ddp["intervals"]) == set(single["intervals"]) >= {"mjd", "pck"}
    for key, interval in single["intervals"].items():
        assert ddp["intervals"][key] == pytest.approx(interval, rel=1e-9, abs=1e-12), key
    ids = [row["sequence_id"] for row in ddp["per_sequence"]]
    assert len(ids) == len(set(ids)) == len(single["per_sequence"])  # each sequence exactly once
