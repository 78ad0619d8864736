"""`task=train_encoder`: train the feature encoder `encoder=` on the dataset's train split (val for
early stopping)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from omegaconf import DictConfig

from gesturebench.data.records import FPS
from gesturebench.encoders.training_common import EncoderConfig
from gesturebench.reporting.loggers import logged
from gesturebench.run.config import build
from gesturebench.tasks.job import Job
from gesturebench.tasks.run import Run

log = logging.getLogger(__name__)


@dataclass
class TrainEncoderTask:
    """`task=train_encoder` (conf/task/train_encoder.yaml): with `dry_run`, only say what would be
    trained."""

    name: str = "train_encoder"
    dry_run: bool = False

    def __call__(self, cfg: DictConfig, job: Job) -> dict:
        return self.train(Run.of(cfg, job, model=False))

    def train(self, run: Run) -> dict:
        """Train `run.encoder` on `run.dataset` (or say what would be trained)."""
        encoder: EncoderConfig = build(run.encoder)
        source, checkpoints = run.dataset, run.paths.checkpoints
        out_path = encoder.checkpoint_path(checkpoints, source.name)
        train = source.open(split="train", load_audio=False)
        val = source.open(split="val", load_audio=False)
        frames = sum(r.n_frames for r in train)  # a pass over the motion files: validates them
        plan = (
            f"train {encoder.name} on {source.name} ({source.root}): {len(train)} train "
            f"sequences ({frames / FPS / 3600:.2f} h), {len(val)} val sequences; options "
            f"{vars(encoder)}; checkpoint -> {out_path}"
        )
        log.info(plan)
        if self.dry_run:
            return {"plan": plan, "checkpoint": str(out_path)}
        name = f"train_{encoder.name}-{source.name}"
        with logged(run.logger, run.job.run_dir, name, run.config, (), run.job.sweep_id) as logger:
            path = encoder.train(train, val, out_path, logger=logger, checkpoints_dir=checkpoints)
        return {"checkpoint": str(path)}
