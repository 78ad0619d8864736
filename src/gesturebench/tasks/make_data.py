"""`task=make_data`: generate mini-BEAT2 (`dataset.seed`, `dataset.size`) into `dataset.root`."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig

from gesturebench.run.config import build
from gesturebench.run.datamodule import Beat2Source
from gesturebench.runtime.errors import ConfigError
from gesturebench.synthesis.mini.dataset import ensure_mini_beat2
from gesturebench.tasks.job import Job

log = logging.getLogger(__name__)


@dataclass
class MakeDataTask:
    """`task=make_data` (conf/task/make_data.yaml)."""

    name: str = "make_data"

    def __call__(self, cfg: DictConfig, job: Job) -> dict:
        """Generate the dataset (a generated one: mini_beat2) into its root, at any root."""
        dataset: Beat2Source = build(cfg.dataset)
        if not dataset.generate:
            raise ConfigError(
                f"task=make_data generates mini_beat2 only; dataset={dataset.name} is read from "
                "disk"
            )
        root = ensure_mini_beat2(Path(dataset.root), seed=dataset.seed, size=dataset.size)
        log.info("mini-BEAT2 (%s, seed %d) at %s", dataset.size, dataset.seed, root)
        return {"root": str(root)}
