"""`task=train_encoder`: train the feature encoder `encoder=` on the dataset's train split (val for
early stopping)."""

from __future__ import annotations

import importlib
import logging

from omegaconf import DictConfig, OmegaConf

from gesturebench.data.datamodule import open_dataset
from gesturebench.errors import ConfigError
from gesturebench.loggers import finish, make_logger
from gesturebench.tasks.common import run_dir

log = logging.getLogger(__name__)

#: encoder name → (training function, checkpoint-path function), as "module:attribute".
ENCODERS = {
    "motion_ae": (
        "gesturebench.encoders.motion_ae_training:train_motion_ae",
        "gesturebench.encoders.checkpoint:motion_ae_path",
    ),
    "text_motion": (
        "gesturebench.encoders.text_training:train_text_motion",
        "gesturebench.encoders.text_motion:text_motion_path",
    ),
}


def _load(ref: str):
    module, attr = ref.split(":")
    return getattr(importlib.import_module(module), attr)


def run(cfg: DictConfig) -> dict:
    name = cfg.encoder.get("name")
    if name not in ENCODERS:
        raise ConfigError(f"encoder={name} cannot be trained; choose one of {', '.join(ENCODERS)}")
    train_fn, path_fn = (_load(ref) for ref in ENCODERS[name])
    out_path = path_fn(cfg.paths.checkpoints, cfg.dataset.name)
    train = open_dataset(cfg.dataset, split="train", load_audio=False)
    val = open_dataset(cfg.dataset, split="val", load_audio=False)
    options = OmegaConf.to_container(cfg.encoder, resolve=True)
    frames = sum(
        r.n_frames for r in train
    )  # a pass over the motion files: also validates them first
    plan = (
        f"train {name} on {cfg.dataset.name} ({cfg.dataset.root}): {len(train)} train sequences "
        f"({frames / 30 / 3600:.2f} h), {len(val)} val sequences; options {options}; checkpoint -> {out_path}"
    )
    log.info(plan)
    if cfg.task.get("dry_run"):
        return {"plan": plan, "checkpoint": str(out_path)}
    logger = make_logger(
        cfg.logger,
        run_dir(),
        f"train_{name}-{cfg.dataset.name}",
        OmegaConf.to_container(cfg, resolve=True),
    )
    try:
        path = train_fn(train, val, options, out_path, logger=logger or None)
    finally:
        finish(logger)
    return {"checkpoint": str(path)}
