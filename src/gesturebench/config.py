"""Structured-config schemas registered in Hydra's ConfigStore, so a typo in an override fails at
once.

The top level and the groups whose fields are fixed (dataset, body_model, trainer, logger, paths)
are typed dataclasses; groups whose options differ per choice (task, model, metrics, encoder,
annotator, study) are open dicts of `_target_` + arguments, checked when they are used.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf

from gesturebench.models.sources.choice import source_target


def repo_root() -> Path:
    """The checkout holding `launch.py` (src layout: three levels above this file), else the working
    folder."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "launch.py").exists() else Path.cwd()


@dataclass
class PathsConfig:
    root: str = "${gb_root:}"
    data: str = "${paths.root}/data"
    checkpoints: str = "${paths.root}/checkpoints"
    cache: str = "${paths.root}/.cache"


@dataclass
class DatasetConfig:
    name: str = "mini_beat2"
    root: str | None = None
    split: str = "test"
    speakers: list[int] | None = None
    fps: int = 30
    # mini_beat2 only: generated on first use with this seed and size ("default" or "standard")
    generate: bool = False
    seed: int = 0
    size: str = "default"
    max_sequences: int | None = None
    num_workers: int = 0
    load_audio: bool = True


@dataclass
class BodyModelConfig:
    model_path: str | None = None
    num_betas: int = 300
    num_expression_coeffs: int = 100
    flat_hand_mean: bool = False
    chunk_size: int = 512
    dtype: str = "float32"


@dataclass
class TrainerConfig:
    accelerator: str = "cpu"
    devices: Any = 1
    strategy: str = "auto"
    num_nodes: int = 1
    precision: Any = 32
    enable_progress_bar: bool = True


@dataclass
class LoggerConfig:
    name: str = "wandb"
    project: str = "gesturebench"
    entity: str | None = None
    mode: str = "offline"
    log_table: bool = True


@dataclass
class Config:
    task: dict = field(default_factory=dict)
    dataset: DatasetConfig = field(default_factory=DatasetConfig)
    model: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)
    body_model: BodyModelConfig = field(default_factory=BodyModelConfig)
    encoder: dict = field(default_factory=dict)
    annotator: dict = field(default_factory=dict)
    study: dict = field(default_factory=dict)
    trainer: TrainerConfig = field(default_factory=TrainerConfig)
    logger: LoggerConfig = field(default_factory=LoggerConfig)
    paths: PathsConfig = field(default_factory=PathsConfig)
    seed: int = 0
    threads: int | None = None
    resume: bool = True
    length_policy: str = "truncate"
    max_length_gap: float = 1.0


def job_dirname(overrides: str, limit: int = 120) -> str:
    """A multirun job's folder name: its overrides, shortened with a hash beyond `limit` characters
    (file systems refuse names over 255 bytes), "default" when there are none. Deterministic, so
    re-running a sweep resumes it."""
    if len(overrides) <= limit:
        return overrides or "default"
    return f"{overrides[: limit - 17]}-{hashlib.sha256(overrides.encode()).hexdigest()[:16]}"


def register_configs() -> None:
    """Register the schemas and the `${gb_root:}` / `${gb_jobdir:...}` / `${gb_source:...}`
    resolvers (idempotent)."""
    if not OmegaConf.has_resolver("gb_root"):
        OmegaConf.register_new_resolver("gb_root", lambda: str(repo_root()))
    if not OmegaConf.has_resolver("gb_jobdir"):
        OmegaConf.register_new_resolver("gb_jobdir", job_dirname)
    if not OmegaConf.has_resolver("gb_source"):
        OmegaConf.register_new_resolver("gb_source", source_target)
    ConfigStore.instance().store(name="config_schema", node=Config)
