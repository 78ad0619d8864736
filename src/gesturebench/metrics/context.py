"""`MetricContext`: what a metric's `prepare` may use to load or build its encoders and
statistics."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gesturebench.data.records import SequenceRecord


@dataclass
class MetricContext:
    """Built once per evaluation by the evaluate task, before any metric update.

    `split(name)` returns the records of a split ("train", "val", "test"; lazy, without audio).
    `auto_train` is True where a missing encoder may be trained on the fly (mini_beat2); elsewhere a
    missing checkpoint must raise `CheckpointError` with the command that creates it, carrying the
    run's command-line `overrides` (its ``dataset.*`` and ``paths.*`` ones).
    """

    dataset_name: str
    split: Callable[[str], Sequence[SequenceRecord]]
    cache_dir: Path
    checkpoints_dir: Path
    body_model: Any
    device: str = "cpu"
    auto_train: bool = False
    overrides: tuple[str, ...] = ()
