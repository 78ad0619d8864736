"""Long stages announce themselves (what, why, first use and where the result is kept) and say
their seconds when done (issue 22, item 1)."""

from __future__ import annotations

import logging
import re
from pathlib import Path

from gesturebench.encoders.motion_ae_training import MotionAEConfig
from gesturebench.stages import stage


def test_stage_says_what_why_and_seconds(caplog):
    with caplog.at_level(logging.INFO, logger="gesturebench.stages"):
        with stage("building x", "y needs it", kept="/cache/x.json"):
            pass
        with stage("analysing", "every run"):
            pass
    assert caplog.messages[0] == "building x (y needs it; first use, kept in /cache/x.json) ..."
    assert re.fullmatch(r"building x: done in \d+\.\d s", caplog.messages[1])
    assert caplog.messages[2] == "analysing (every run) ..."


class StubConfig(MotionAEConfig):
    """Trains by writing "w", loads by reading it."""

    def train(self, train, val, out_path, logger=None):
        Path(out_path).write_text("w")
        return Path(out_path)

    def load(self, path):
        return path.read_text(), {}


def test_encoder_training_is_announced_only_when_it_runs(tmp_path, caplog):
    """`EncoderConfig.load_or_train` with its training and loading stubbed."""
    path = tmp_path / "motion_ae-toy.pt"
    cfg = StubConfig()
    with caplog.at_level(logging.INFO, logger="gesturebench.stages"):
        assert cfg.load_or_train(tmp_path, "toy", lambda s: [], True, path)[0] == "w"
        assert len(caplog.messages) == 2
        assert caplog.messages[0].startswith("training the motion_ae encoder on the train split")
        assert f"first use, kept in {path}" in caplog.messages[0]
        cfg.load_or_train(tmp_path, "toy", lambda s: [], True, path)  # cached: silent
    assert len(caplog.messages) == 2
