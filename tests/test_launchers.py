"""Parallel Hydra launchers: joblib gives the basic launcher's summary; submitit_local runs a
two-job sweep."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.conftest import SWEEP_ARGS, SWEEP_MODELS
from tests.launch import launch

pytestmark = pytest.mark.slow

SWEEP = ("metrics=fast", "logger=none", "dataset.max_sequences=1", "task.render_clips=0")


def summary(sweep_dir):
    table = pd.read_csv(sweep_dir / "summary.csv")
    return table.drop(columns=["job"]).sort_values("model").reset_index(drop=True)


def test_joblib_equals_basic(basic_sweep, tmp_path):
    sweep, basic = basic_sweep
    assert basic.returncode == 0, basic.stderr[-2000:]
    parallel = launch(
        "-m",
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
        SWEEP_MODELS,
        *SWEEP_ARGS,
        f"hydra.sweep.dir={tmp_path / 'joblib'}",
        timeout=1200,
    )
    assert parallel.returncode == 0, parallel.stderr[-2000:]
    a, b = summary(sweep), summary(tmp_path / "joblib")
    assert len(a) == 3
    pd.testing.assert_frame_equal(a, b)


def test_submitit_local_two_jobs(tmp_path):
    proc = launch(
        "-m",
        "hydra/launcher=submitit_local",
        "model=ground_truth,mean_pose",
        *SWEEP,
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    table = summary(tmp_path / "sweep")
    assert list(table["model"]) == ["ground_truth", "mean_pose"] and set(table["status"]) == {"ok"}
    assert table.loc[1, "mjd"] > 0
