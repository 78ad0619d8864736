"""What several tasks build from the config: the run folder, the body model, the run context."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import torch
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from gesturebench.body.model import BodyModel
from gesturebench.metrics.context import MetricContext
from gesturebench.run.config import build
from gesturebench.run.datamodule import open_dataset
from gesturebench.runtime.errors import ConfigError


def run_dir() -> Path:
    """The Hydra run folder of this job (the working folder outside Hydra)."""
    if HydraConfig.initialized():
        return Path(HydraConfig.get().runtime.output_dir)
    return Path.cwd()


def device_for(cfg: DictConfig) -> str:
    """This process's device: its own GPU (`LOCAL_RANK` under DDP) with `trainer=gpu`, else the CPU.

    Models, encoders and statistics are prepared before Lightning moves the Evaluator, so they must
    already be on the rank's GPU: a bare "cuda" would put every rank's on GPU 0. A GPU asked for
    where CUDA sees none is a `ConfigError` now, before any data or encoder is prepared (Lightning
    would refuse it later, with a traceback)."""
    if cfg.trainer.accelerator not in ("gpu", "cuda"):
        return "cpu"
    if not torch.cuda.is_available():
        raise ConfigError(
            f"trainer.accelerator={cfg.trainer.accelerator}: no CUDA GPU is visible on this"
            " machine (torch.cuda.is_available() is False); use trainer=cpu"
        )
    return f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}"


def make_body_model(cfg: DictConfig) -> BodyModel:
    """`body_model` built on this process's device."""
    return build(cfg.body_model, device=device_for(cfg))


def dataset_cache_dir(cfg: DictConfig) -> Path:
    """Cache folder of this dataset (name + a hash of its root, so two copies never share
    statistics)."""
    root_hash = hashlib.sha256(str(Path(str(cfg.dataset.root)).resolve()).encode()).hexdigest()[:8]
    return Path(cfg.paths.cache) / f"{cfg.dataset.name}-{root_hash}"


def make_context(cfg: DictConfig, body_model: BodyModel) -> MetricContext:
    """The context models and metrics `prepare` from; mini_beat2 (generated data) may auto-train
    encoders."""
    return MetricContext(
        dataset_name=cfg.dataset.name,
        split=lambda name: open_dataset(cfg.dataset, split=name, load_audio=False),
        cache_dir=dataset_cache_dir(cfg),
        checkpoints_dir=Path(cfg.paths.checkpoints),
        body_model=body_model,
        device=device_for(cfg),
        auto_train=bool(cfg.dataset.generate),
    )
