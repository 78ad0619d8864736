"""What the encoders' training shares: config dataclasses built from a mapping, and the seeded CPU
`Trainer` fit."""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader

from gesturebench.errors import ConfigError


class EncoderConfig:
    """Mixin for an encoder's frozen config dataclass, whose `name` field defaults to the encoder's
    name."""

    name: str

    @classmethod
    def from_mapping(cls, values: Mapping | None):
        """From a dict or an OmegaConf node; an unknown key is a `ConfigError` naming it."""
        values = {k: values[k] for k in values} if values is not None else {}
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - fields)
        if unknown:
            raise ConfigError(
                f"encoder ({cls.name}): unknown option(s) {unknown}; known: {sorted(fields)}"
            )
        return cls(**values)

    @classmethod
    def coerce(cls, cfg):
        """`cfg` itself when it is already this config, else `from_mapping(cfg)`."""
        return cfg if isinstance(cfg, cls) else cls.from_mapping(cfg)


@contextmanager
def torch_flags_restored() -> Iterator[None]:
    """Put back torch's global determinism flags (and cuBLAS's workspace setting) after a block that
    changes them.

    `Trainer(deterministic=True)` turns `torch.use_deterministic_algorithms` on for the whole
    process; an encoder trained on the fly would otherwise leave it on for the evaluation that
    follows, where CUDA kernels without a deterministic implementation raise.
    """
    deterministic = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    cudnn = torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark
    workspace = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(deterministic, warn_only=warn_only)
        torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = cudnn
        if workspace is None:
            os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)
        else:
            os.environ["CUBLAS_WORKSPACE_CONFIG"] = workspace


def fit(
    module: pl.LightningModule,
    train_loader: DataLoader,
    val_loader: DataLoader,
    cfg,
    callbacks: Sequence[pl.Callback],
    out_path: Path,
    logger=None,
    progress_bar: bool = True,
) -> pl.Trainer:
    """Fit `module` with a deterministic single-CPU Trainer bounded by
    `cfg.max_epochs`/`cfg.max_steps`; no Lightning checkpoints (the caller saves the encoder);
    torch's global flags are as before afterwards. Returns the trainer (epochs, steps)."""
    with (
        torch_flags_restored(),
        warnings.catch_warnings(),
    ):  # the Trainer sets the flags when it is built
        trainer = pl.Trainer(
            accelerator="cpu",
            devices=1,
            max_epochs=cfg.max_epochs,
            max_steps=cfg.max_steps,
            callbacks=list(callbacks),
            logger=logger if logger is not None else False,
            enable_checkpointing=False,
            enable_progress_bar=progress_bar,
            enable_model_summary=False,
            deterministic=True,
            log_every_n_steps=min(50, len(train_loader)),
            default_root_dir=out_path.parent,
        )
        warnings.filterwarnings("ignore", message=".*does not have many workers.*")
        trainer.fit(module, train_loader, val_loader)
    return trainer
