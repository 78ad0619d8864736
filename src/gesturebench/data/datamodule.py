"""`GestureDataModule`: the evaluated split as a LightningDataModule, one `SequenceRecord` per
batch.

Under DDP every sequence goes to exactly one process (`UnrepeatedSampler`, no padding), so no
sequence is counted twice; the Trainer must be built with `use_distributed_sampler=False`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytorch_lightning as pl
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset, Sampler

from gesturebench.data.records import SequenceRecord
from gesturebench.errors import ConfigError


class UnrepeatedSampler(Sampler[int]):
    """Indices rank, rank+world, … of the dataset: a partition across processes, nothing repeated.
    """

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


def open_dataset(cfg, split: str | None = None, load_audio: bool | None = None) -> Sequence[SequenceRecord]:
    """The records of `split` (default `cfg.split`) of the configured dataset, generating mini-BEAT2
    if needed."""
    from gesturebench.data.beat2 import Beat2Dataset

    if cfg.root in (None, "", "???"):
        raise ConfigError(f"dataset={cfg.name} needs dataset.root=/path/to/the/dataset")
    root = Path(cfg.root)
    if cfg.generate:
        from gesturebench.data.mini.dataset import ensure_mini_beat2

        ensure_mini_beat2(root, seed=cfg.seed, size=cfg.size)
    return Beat2Dataset(
        root,
        split=split or cfg.split,
        speakers=list(cfg.speakers) if cfg.speakers else None,
        load_audio=cfg.load_audio if load_audio is None else load_audio,
        max_sequences=cfg.max_sequences,
    )


class GestureDataModule(pl.LightningDataModule):
    """Serves the configured split for `Trainer.test`."""

    def __init__(self, dataset: Dataset, num_workers: int = 0):
        super().__init__()
        self.dataset = dataset
        self.num_workers = num_workers

    def test_dataloader(self) -> DataLoader:
        return DataLoader(
            self.dataset,
            batch_size=1,
            sampler=UnrepeatedSampler(len(self.dataset)),
            collate_fn=_first,
            num_workers=self.num_workers,
        )
