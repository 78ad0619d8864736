"""Protocol presets end to end (docs/protocols.md), run in the test process as `launch.py` runs
them: `metrics=emage2025` uses EMAGE's encoder (seeded weights in the released layout) and EMAGE's
speed normaliser, and results.json carries the preset name, the raw values, its pin (not
applicable on mini-BEAT2) and both files' SHA-256."""

from __future__ import annotations

import pytest
import torch

from gesturebench.runtime.weights import sha256_file
from tests.emage_fgd_support import released_state
from tests.launch import results

pytestmark = pytest.mark.slow


def test_emage2025_preset_runs_with_its_conventions(tmp_path, in_process, emage_mean_speed):
    mean_speed = emage_mean_speed
    weights = tmp_path / "AESKConv_240_100.bin"
    torch.save({"model_state": released_state(7)}, weights)
    in_process(
        "metrics=emage2025",
        f"metrics.fgd.weights={weights}",
        f"metrics.bc.mean_speed_file={mean_speed}",
        "dataset.max_sequences=2",
        "logger=none",
        "task.render_clips=0",
        f"hydra.run.dir={tmp_path / 'run'}",
        encoders=False,  # the preset uses no trained encoder
    )
    res = results(tmp_path / "run")
    assert res["preset"] == "emage2025"
    values = res["metrics"]
    assert res["display"] == {}  # PantoMatrix's 2025 model list prints the values as they are
    assert res["protocol"]["status"] == "not applicable"  # the speaker-2 pin, on mini-BEAT2
    # ground truth against itself: EMAGE 2025's formula gives −2·dim·1e-6 (unclamped), not 0
    assert values["fgd"] == pytest.approx(-2 * 240 * 1e-6, abs=1e-9)
    assert values["fgd_raw_pose"] == pytest.approx(-2 * 333 * 1e-6, abs=1e-9)
    assert 0 < values["bc"] <= 1 and values["diversity"] > 0
    assert res["options"]["fgd"]["encoder"] == "emage"
    assert res["options"]["fgd"]["covariance_offset"] == 1e-6
    assert res["encoders"]["emage_fgd"]["sha256"] == sha256_file(weights)
    assert res["encoders"]["bc_mean_speed"]["sha256"] == sha256_file(mean_speed)


def test_genea_preset_runs_on_mini_beat2(tmp_path, in_process, emage_mean_speed):
    mean_speed = emage_mean_speed
    speeds = [f"metrics.{name}.mean_speed_file={mean_speed}" for name in ("ba_a2m", "ba_m2a")]
    weights = tmp_path / "AESKConv_240_100.bin"
    torch.save({"model_state": released_state(7)}, weights)
    quick = ["dataset.max_sequences=2", "logger=none", "task.render_clips=0"]
    run_dir = f"hydra.run.dir={tmp_path / 'run'}"
    in_process(
        "metrics=genea",
        f"metrics.fgd.weights={weights}",
        *speeds,
        *quick,
        run_dir,
        encoders=False,  # the preset uses no trained encoder
    )
    res = results(tmp_path / "run")
    assert res["preset"] == "genea"
    values = res["metrics"]
    # ground truth against itself: the raw-pose distances vanish, the rest are the reference's own
    assert values["fgd"] == pytest.approx(-2 * 240 * 1e-6, abs=1e-9)  # EMAGE 2025's formula
    assert res["encoders"]["emage_fgd"]["sha256"] == sha256_file(weights)
    assert values["fd_g"] == pytest.approx(0.0, abs=1e-8)
    assert values["fd_k"] == pytest.approx(0.0, abs=1e-8)
    for name in ("ba_a2m", "ba_m2a"):
        assert 0 < values[name] <= 1 and values[name] == values[f"{name}_ref"]
    assert values["srgr"] > 0 and values["div_pose"] > 0 and values["div_k"] > 0
    assert res["options"]["ba_m2a"]["direction"] == "motion_to_audio"
    for name in ("ba_a2m", "ba_m2a"):
        assert res["encoders"][f"{name}_mean_speed"]["sha256"] == sha256_file(mean_speed)
