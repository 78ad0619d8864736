"""`task=make_data`: generate mini-BEAT2 (`dataset.seed`, `dataset.size`) into `dataset.root`."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig

from gesturebench.runtime.errors import ConfigError
from gesturebench.synthesis.mini.dataset import ensure_mini_beat2

log = logging.getLogger(__name__)


@dataclass
class MakeDataTask:
    """`task=make_data` (conf/task/make_data.yaml)."""

    name: str = "make_data"

    def __call__(self, cfg: DictConfig) -> dict:
        return run(cfg)


def run(cfg: DictConfig) -> dict:
    if not cfg.dataset.generate:
        raise ConfigError(
            "task=make_data generates mini_beat2 only; "
            f"dataset={cfg.dataset.name} is read from disk"
        )
    root = ensure_mini_beat2(Path(cfg.dataset.root), seed=cfg.dataset.seed, size=cfg.dataset.size)
    log.info("mini-BEAT2 (%s, seed %d) at %s", cfg.dataset.size, cfg.dataset.seed, root)
    return {"root": str(root)}
