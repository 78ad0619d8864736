"""`GestureDataModule`: the evaluated split as a LightningDataModule, one `SequenceRecord` per
batch.

Under DDP every sequence goes to exactly one process (`UnrepeatedSampler`, no padding), so no
sequence is counted twice; the Trainer must be built with `use_distributed_sampler=False`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pytorch_lightning as pl
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset, Sampler

from gesturebench.data.beat2 import AudioCheck, AudioMismatch, Beat2Dataset
from gesturebench.data.records import SequenceRecord
from gesturebench.metrics.motion_features import Encoder
from gesturebench.synthesis.mini.dataset import MiniSize


class UnrepeatedSampler(Sampler[int]):
    """Indices rank, rank+world, … of the dataset: a partition across processes, nothing
    repeated."""

    def __init__(self, length: int):
        self.length = length

    @staticmethod
    def _rank_world() -> tuple[int, int]:
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
        return 0, 1

    def __iter__(self) -> Iterator[int]:
        rank, world = self._rank_world()
        return iter(range(rank, self.length, world))

    def __len__(self) -> int:
        rank, world = self._rank_world()
        return len(range(rank, self.length, world))


def _first(batch: list[SequenceRecord]) -> SequenceRecord:
    return batch[0]


@dataclass
class Beat2Source:
    """A dataset in BEAT2's layout (`conf/dataset/*`): where it is and what of it is read; `open`
    gives a split's records. With `generate`, mini-BEAT2 (`seed`, `size`) is generated into `root`
    on first use. `feature_encoder` is the learned metrics' encoder that fits its motion (FGD,
    Density and Coverage of the presets that do not pin one: ``${dataset.feature_encoder}``)."""

    name: str
    root: str
    split: str = "test"
    speakers: list[int] | None = None
    max_sequences: int | None = None
    load_audio: bool = True
    num_workers: int = 0
    generate: bool = False
    seed: int = 0
    size: MiniSize = "default"
    #: audio whose length differs from its motion's by more than this many seconds (null: not
    #: checked) is refused, or with `audio_mismatch=skip` left out (its audio metrics skipped)
    max_audio_gap: float | None = None
    audio_mismatch: AudioMismatch = "refuse"
    feature_encoder: Encoder = "motion_ae"

    def open(
        self, split: str | None = None, load_audio: bool | None = None
    ) -> Sequence[SequenceRecord]:
        """The records of the evaluated split (`self.split`: its first `max_sequences`), or of
        another `split` whole (the train and val splits the references are made from: learned
        metrics' encoders, baselines, BC's normaliser; the same in a quick run as in a full one);
        audio per `load_audio` (default `self.load_audio`)."""
        root = Path(self.root)
        if self.generate:
            from gesturebench.synthesis.mini.dataset import ensure_mini_beat2

            ensure_mini_beat2(root, seed=self.seed, size=self.size)
        dataset = Beat2Dataset(
            root,
            split=split or self.split,
            speakers=list(self.speakers) if self.speakers else None,
            load_audio=self.load_audio if load_audio is None else load_audio,
            max_sequences=self.max_sequences if split is None else None,
            audio_check=AudioCheck(self.max_audio_gap, self.audio_mismatch),
        )
        return cast(Sequence[SequenceRecord], dataset)

    def splits(self, names: Iterable[str]) -> OpenedSplits:
        """The splits `names`, each opened once and whole (audio per `load_audio`)."""
        return OpenedSplits(
            self.name,
            Path(self.root),
            {name: cast(Beat2Dataset, self.open(split=name)) for name in dict.fromkeys(names)},
        )


@dataclass(frozen=True)
class OpenedSplits:
    """Splits of dataset `name` (in `root`), opened: `datasets` maps a split's name to its
    sequences."""

    name: str
    root: Path
    datasets: dict[str, Beat2Dataset]

    def __getitem__(self, split: str) -> Beat2Dataset:
        return self.datasets[split]

    def without_audio(self, split: str) -> Sequence[SequenceRecord]:
        """`split`'s sequences read without their audio."""
        return cast(Sequence[SequenceRecord], self.datasets[split].without_audio())


class GestureDataModule(pl.LightningDataModule):
    """Serves the configured split for `Trainer.test`."""

    def __init__(self, dataset: Sequence[SequenceRecord], num_workers: int = 0):
        super().__init__()
        self.dataset = dataset
        self.num_workers = num_workers

    def test_dataloader(self) -> DataLoader:
        return DataLoader(
            cast(Dataset, self.dataset),
            batch_size=1,
            sampler=UnrepeatedSampler(len(self.dataset)),
            collate_fn=_first,
            num_workers=self.num_workers,
        )

    def transfer_batch_to_device(self, batch, device, dataloader_idx):
        """A record as it is: it holds numpy arrays, the body model moves what it needs to its
        device (declared here, not on the Evaluator, so Lightning has no hook conflict to warn
        about)."""
        return batch
