"""Quiet output: Lightning's routine lines (seed, devices) are DEBUG records, shown only where
that logger is set to DEBUG; its other INFO lines still show."""

from __future__ import annotations

import logging

import pytorch_lightning as pl
from pytorch_lightning.utilities.rank_zero import rank_zero_info

from gesturebench.runtime.quiet import silence_known_noise

ROUTINE = ("Seed set to 0", "GPU available: ", "TPU available: ")


def lightning_lines() -> None:
    pl.seed_everything(0)
    pl.Trainer(accelerator="cpu", logger=False, enable_progress_bar=False)
    rank_zero_info("another line")


def test_lightnings_routine_lines_are_below_the_default_level(caplog, monkeypatch):
    silence_known_noise()
    for name in ("pytorch_lightning", "lightning_fabric"):  # to caplog's handler on the root
        monkeypatch.setattr(logging.getLogger(name), "propagate", True)
    with caplog.at_level(logging.INFO):
        lightning_lines()
    assert "another line" in caplog.messages
    assert not [m for m in caplog.messages if m.startswith(ROUTINE)], caplog.messages
    caplog.clear()
    with (
        caplog.at_level(logging.DEBUG, logger="pytorch_lightning"),
        caplog.at_level(logging.DEBUG, logger="lightning_fabric"),
    ):
        lightning_lines()
    shown = {r.getMessage(): r.levelname for r in caplog.records}
    for start in ROUTINE:
        (message,) = [m for m in shown if m.startswith(start)]
        assert shown[message] == "DEBUG"
    assert shown["another line"] == "INFO"
