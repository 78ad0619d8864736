"""Long stages announce themselves (what, why, first use and where the result is kept), show a
bar in Lightning's look and say their seconds when done."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import torch

from gesturebench.encoders.motion_ae_training import MotionAEConfig
from gesturebench.metrics.bc import BeatConsistency
from gesturebench.runtime import stages
from gesturebench.runtime.stages import progress, stage
from tests.helpers import toy_context
from tests.metrics.speech import MEAN_SPEED, bc_pairs


def test_stage_says_what_why_and_seconds(caplog):
    with caplog.at_level(logging.INFO, logger="gesturebench.runtime.stages"):
        with stage("building x", "y needs it", kept="/cache/x.json"):
            pass
        with stage("analysing", "every run"):
            pass
    assert caplog.messages[0] == "building x (y needs it; first use, kept in /cache/x.json) ..."
    assert re.fullmatch(r"building x: done in \d+\.\d s", caplog.messages[1])
    assert caplog.messages[2] == "analysing (every run) ..."


class StubEncoder(torch.nn.Module):
    """An encoder without weights that holds the text of its checkpoint."""

    def __init__(self, text: str):
        super().__init__()
        self.text = text


class StubConfig(MotionAEConfig):
    """Trains by writing the checkpoint entry "w" (with its sidecar, as training does), loads an
    encoder holding it."""

    def train(self, train, val, out_path, logger=None, checkpoints_dir="checkpoints"):
        self.entry(Path(out_path)).write(b"w")
        return Path(out_path)

    def load(self, path, overrides=()):
        return StubEncoder(path.read_text()), {}


def test_encoder_training_is_announced_only_when_it_runs(tmp_path, caplog):
    """`EncoderConfig.load_or_train` with its training and loading stubbed."""
    path = tmp_path / "motion_ae-toy.pt"
    cfg = StubConfig()
    with caplog.at_level(logging.INFO, logger="gesturebench.runtime.stages"):
        assert cfg.load_or_train(tmp_path, "toy", lambda s: [], True, path)[0].text == "w"
        assert len(caplog.messages) == 2
        assert caplog.messages[0].startswith("training the motion_ae encoder on the train split")
        assert f"first use, kept in {path}" in caplog.messages[0]
        cfg.load_or_train(tmp_path, "toy", lambda s: [], True, path)  # cached: silent
    assert len(caplog.messages) == 2


def test_progress_announces_shows_a_lightning_bar_and_reports(caplog, capsys):
    with caplog.at_level(logging.INFO, logger="gesturebench.runtime.stages"):
        assert list(progress(iter("abc"), "reading", "a test", kept="/k", total=3)) == list("abc")
    assert caplog.messages[0] == "reading (a test; first use, kept in /k) ..."
    assert re.fullmatch(r"reading: done in \d+\.\d s", caplog.messages[1])
    bar = capsys.readouterr().out  # off a terminal, rich draws the finished bar once
    # Lightning's RichProgressBar columns: description, bar, done/total, elapsed • left, speed
    assert re.search(r"reading .*3/3 0:00:00 • 0:00:00 [\d.]+it/s", bar), bar


def test_a_bar_of_slow_items_counts_their_frames(capsys):
    """Windows of 30 and 60 frames (as `task=render`'s): advanced by their frames, the speed in
    frames/s (a window takes seconds, so items/s would read 0.00 it/s)."""
    windows = [("a", 30), ("b", 60)]
    got = list(stages.track(windows, "source", 90, "frames", lambda window: window[1]))
    assert got == windows
    bar = capsys.readouterr().out
    assert re.search(r"source .*90/90 0:00:00 • 0:00:00 [\d.]+ frames/s", bar), bar


def test_bars_follow_enable_progress_bar(capsys):
    with stages.bars_shown(False):
        assert list(stages.track(range(2), "hidden")) == [0, 1]
    assert capsys.readouterr().out == ""
    with stages.bar("unknown length") as update:  # no total: "--", as Lightning shows it
        update(advance=5)
    assert "5/--" in capsys.readouterr().out


def test_first_use_speech_onsets_announce_themselves(tmp_path, caplog):
    """BC's onsets are computed while the sequences are scored (under the evaluation's bar): the
    first one not cached announces the stage, the end of scoring says its count and seconds; a
    cached run is silent."""
    pairs = bc_pairs(2)
    onsets = tmp_path / "onsets"
    what = "bc: finding the speech onsets of each scored sequence's audio"
    for run in ("first", "cached"):
        caplog.clear()
        metric = BeatConsistency(mean_speed=MEAN_SPEED)
        metric.prepare(toy_context(tmp_path))
        with caplog.at_level(logging.INFO, logger="gesturebench.runtime.stages"):
            for pair in pairs:
                metric.update(pair)
            assert metric.compute()["bc"] is not None
        if run == "first":
            why = f"its beats; each segment once; first use, kept in {onsets}"
            assert caplog.messages[0] == f"{what} ({why}) ..."
            assert re.fullmatch(re.escape(what) + r": 2 done in \d+\.\d s", caplog.messages[1])
            assert len(caplog.messages) == 2
        else:
            assert caplog.messages == []
