"""`task=train_encoder` as `launch.py` runs it, in the test process: a real training on mini-BEAT2,
and the plan it prints for a dataset."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

pytestmark = pytest.mark.slow


def shown(capsys, caplog) -> str:
    """What a run printed and logged."""
    out, err = capsys.readouterr()
    return out + err + caplog.text


def test_train_motion_ae_writes_checkpoint_and_prints_its_hash(
    tmp_path, in_process, capsys, caplog
):
    ckpt = tmp_path / "checkpoints"
    in_process(
        "task=train_encoder",
        "encoder=motion_ae",
        "encoder.max_steps=20",
        "logger=csv",
        f"paths.checkpoints={ckpt}",
        f"hydra.run.dir={tmp_path / 'run'}",
    )
    path = ckpt / "encoders" / "motion_ae-mini_beat2.pt"
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    assert f"sha256={sha}" in shown(capsys, caplog)
    info = json.loads(path.with_suffix(".json").read_text())
    assert info["config"]["max_steps"] == 20
    # training curves went to the logger, in the run folder under the run's name
    assert list((tmp_path / "run" / "train_motion_ae-mini_beat2").rglob("metrics.csv"))


def test_dry_run_says_what_it_would_train(tmp_path, in_process, capsys, caplog):
    in_process(
        "task=train_encoder",
        "encoder=text_motion",
        "task.dry_run=true",
        "logger=none",
        f"paths.checkpoints={tmp_path}",
        f"hydra.run.dir={tmp_path / 'run'}",
    )
    out = shown(capsys, caplog)
    assert re.search(r"train text_motion on mini_beat2 .*16 train sequences .*4 val sequences", out)
    assert str(tmp_path / "encoders" / "text_motion-mini_beat2.pt") in out
    assert not (tmp_path / "encoders").exists()


def test_emage_parity_preset_runs(tmp_path, in_process):
    in_process(
        "metrics=emage_parity",
        "~metrics.chamfer",
        "~metrics.hausdorff",
        "dataset.max_sequences=1",
        "logger=none",
        "task.render_clips=0",
        f"hydra.run.dir={tmp_path / 'run'}",
    )
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["options"]["bc"]["direction"] == "audio_to_motion"
    assert 0 < results["metrics"]["bc"] <= 1
