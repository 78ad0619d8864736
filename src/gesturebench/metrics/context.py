"""`MetricContext`: what a metric's `prepare` may use to load or build its encoders and
statistics."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gesturebench.data.records import SequenceRecord

if TYPE_CHECKING:
    from gesturebench.encoders.training_common import EncoderConfig


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
    #: the encoders loaded so far (`encoder`), by config and configured checkpoint
    loaded: dict[tuple[Any, str | None], tuple[Any, dict]] = field(default_factory=dict, repr=False)

    def encoder(self, config: EncoderConfig, path: str | None = None) -> tuple[Any, dict]:
        """The encoder of `config` and its info (`EncoderConfig.load_or_train` with this context's
        folders and data; `path`: a checkpoint the user configured), loaded once per context: the
        metrics that use the same encoder (FGD, Density and Coverage its motion autoencoder) share
        one load, and one check that it was trained on this data."""
        key = (config, path)
        if key not in self.loaded:
            self.loaded[key] = config.load_or_train(
                self.checkpoints_dir,
                self.dataset_name,
                self.split,
                self.auto_train,
                path=path,
                overrides=self.overrides,
            )
        return self.loaded[key]
