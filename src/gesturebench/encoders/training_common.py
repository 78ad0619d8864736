"""What the encoders' training shares: the training-config interface with its seeded, timed
`train` (fit, summary, checkpoint), and the deterministic CPU `Trainer` fit."""

from __future__ import annotations

import functools
import os
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

import pytorch_lightning as pl
import torch
from pytorch_lightning.loggers import Logger
from torch.utils.data import DataLoader

from gesturebench.data.records import SequenceRecord
from gesturebench.encoders.checkpoint import encoder_entry, save_encoder
from gesturebench.runtime.caches import CacheEntry
from gesturebench.runtime.stages import stage


class Fitted(NamedTuple):
    """What an encoder's `fit_module` gives back: the trained module (in eval mode), its trainer,
    the encoder's own summary figures and a one-line account of them for the console."""

    module: pl.LightningModule
    trainer: pl.Trainer
    figures: dict[str, Any]
    headline: str


@dataclass(frozen=True)
class EncoderConfig:
    """Base of an encoder's frozen training-config dataclass (`conf/encoder/*` builds one): the
    training schedule every encoder shares, and what `task=train_encoder`, auto-training and the
    metrics' `prepare` need of it. A subclass adds its architecture fields, implements `fit_module`
    and `checkpoint_path`, and names its `checkpoint_format` and `load` (path → module, info)."""

    name: str = "encoder"
    batch_size: int = 64
    lr: float = 1e-3
    max_epochs: int = 30
    max_steps: int = 200
    #: epochs without a better validation figure before training stops
    patience: int = 5
    #: feature standard deviations are floored here before normalising
    std_floor: float = 0.01
    seed: int = 0
    #: the checkpoint's "format" (see `encoders.checkpoint`)
    checkpoint_format: ClassVar[str]

    @classmethod
    def coerce(cls, cfg: Any) -> Any:
        """`cfg` itself when it is already this config, else this config from the mapping `cfg`
        (None: the defaults)."""
        return cfg if isinstance(cfg, cls) else cls(**(cfg or {}))

    def checkpoint_path(self, checkpoints_dir: str | Path, dataset: str) -> Path:
        """Where the encoder of `dataset` is stored."""
        raise NotImplementedError

    def load(self, path: Path, overrides: Sequence[str] = ()) -> tuple[Any, dict]:
        """The module stored at `path` and its info; `CheckpointError` when missing or unusable,
        naming the command (with the run's command-line `overrides`) that creates it."""
        raise NotImplementedError

    def load_or_train(
        self,
        checkpoints_dir: str | Path,
        dataset: str,
        split: Callable[[str], Sequence[SequenceRecord]],
        auto_train: bool,
        path: str | Path | None = None,
        overrides: Sequence[str] = (),
    ) -> tuple[Any, dict]:
        """The encoder at `path` (default `checkpoint_path`) and its info, after training it on
        `split("train")`/`split("val")` when it is missing and `auto_train`; without `auto_train` a
        missing checkpoint is `load`'s `CheckpointError` naming the command that creates it (with
        the run's command-line `overrides`)."""
        path = Path(path) if path is not None else self.checkpoint_path(checkpoints_dir, dataset)
        if auto_train and (loaded := self.entry(path).read()) is not None:
            return loaded
        if not path.is_file() and auto_train:
            with stage(
                f"training the {self.name} encoder on the train split",
                "the learned metrics need it and no checkpoint exists yet",
                kept=str(path),
            ):
                self.train(split("train"), split("val"), path, checkpoints_dir=checkpoints_dir)
        return self.load(path, overrides)

    def entry(self, path: Path) -> CacheEntry[tuple[Any, dict]]:
        """The checkpoint at `path` as a cache entry (`encoders.checkpoint.encoder_entry`)."""
        return encoder_entry(path, self.checkpoint_format, self.load)

    def fit_module(
        self,
        train: Sequence[SequenceRecord],
        val: Sequence[SequenceRecord],
        fit: Callable[..., pl.Trainer],
        checkpoints_dir: str | Path,
    ) -> Fitted:
        """Build the encoder's module and fit it on `train`, early-stopping on `val`, with
        `fit(module, train_loader, val_loader, callbacks[, progress_bar])` (`fit` below, bound to
        this config and the run's output path and logger); `checkpoints_dir` holds the released
        weights it may use (the text model)."""
        raise NotImplementedError

    def train(
        self,
        train: Sequence[SequenceRecord],
        val: Sequence[SequenceRecord],
        out_path: str | Path,
        logger: Logger | None = None,
        checkpoints_dir: str | Path = "checkpoints",
    ) -> Path:
        """Train on `train` (seeded by `seed`), early-stop on `val`, write the checkpoint at
        `out_path`, its summary being `fit_module`'s figures with the run's epochs, steps and
        seconds; return it."""
        out_path = Path(out_path)
        started = time.perf_counter()
        pl.seed_everything(self.seed, workers=True)
        fitted = self.fit_module(
            train,
            val,
            functools.partial(fit, cfg=self, out_path=out_path, logger=logger),
            checkpoints_dir,
        )
        seconds = round(time.perf_counter() - started, 2)
        summary = {
            **fitted.figures,
            "epochs": fitted.trainer.current_epoch,
            "steps": fitted.trainer.global_step,
            "seconds": seconds,
        }
        config = asdict(self)
        sha = save_encoder(fitted.module, self.entry(out_path), config, summary)
        print(f"{self.name} checkpoint {out_path} sha256={sha} {fitted.headline} in {seconds} s")
        return out_path


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
    callbacks: Sequence[pl.Callback],
    cfg,
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
