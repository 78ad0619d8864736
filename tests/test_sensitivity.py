"""Do the metrics react to what they should? Perturbed runs and sweeps on mini-BEAT2, in the test
process."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.launch import results

pytestmark = pytest.mark.slow

# the metrics under test; the others are dropped to keep the sweep short
DROP = (
    "~metrics.bc",
    "~metrics.srgr",
    "~metrics.sc",
    "~metrics.sgp",
    "~metrics.foot_contact",
    "~metrics.diversity",
)
SMALL = (
    "dataset.max_sequences=1",
    "logger=none",
    "task.render_clips=0",
    "metrics.chamfer.num_points=2000",
    "metrics.hausdorff.num_points=2000",
)


def test_rotation_noise_sweep_is_monotone(tmp_path, in_process):
    sweep = tmp_path / "sweep"
    code = in_process(
        "-m",
        "model=perturbed",
        "model/perturbation=rotation_noise",
        "model.level=0.03,0.1,0.3",
        *DROP,
        *SMALL,
        f"hydra.sweep.dir={sweep}",
    )
    assert code == 0
    table = pd.read_csv(sweep / "summary.csv").sort_values("model").reset_index(drop=True)
    assert list(table["model"]) == [f"perturbed_rotation_noise_{x}" for x in (0.03, 0.1, 0.3)]
    for column in ("mjd", "chamfer", "hausdorff", "fgd"):
        assert (
            table[column].is_monotonic_increasing and table[column].iloc[0] < table[column].iloc[-1]
        ), column
    for column in ("dice", "pck"):
        assert (
            table[column].is_monotonic_decreasing and table[column].iloc[0] > table[column].iloc[-1]
        ), column
    assert "perturbed_rotation_noise_0.3" in (sweep / "summary.md").read_text()


def test_jitter_moves_ldlj_rel_away_from_zero(tmp_path, in_process):
    in_process(
        "model=perturbed",
        "model/perturbation=jitter",
        "model.level=0.05",
        "metrics=paper",
        *DROP,
        *SMALL,
        f"hydra.run.dir={tmp_path / 'run'}",
    )
    res = results(tmp_path / "run")["metrics"]
    assert res["ldlj_rel"] > 1.0  # the reference is much smoother than its jittered copy
    assert res["ldlj_gen"] < res["ldlj_ref"]
