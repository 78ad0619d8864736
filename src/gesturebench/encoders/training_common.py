"""What the encoders' training shares: the training-config interface with its seeded, timed
`train` (fit, summary, checkpoint), the lookup of an auto-trained encoder (`load_or_train`: the
configured path, `paths.checkpoints`, the encoders shipped with the package, else training), and the
deterministic CPU `Trainer` fit.

An encoder's training identity (`EncoderConfig.identity`, the sidecar's "trained_on") is what
determines its weights: the training config and the SHA-256 of the train and val records it is fit
on (ids, motion arrays, words), plus what an encoder adds (the text model's files). An auto-trained
checkpoint is used only when its identity is the run's; the shipped ones
(`src/gesturebench/encoders/shipped/`, mini-BEAT2's default size and seed with the default configs)
only when theirs is (docs/performance.md, "First run")."""

from __future__ import annotations

import functools
import json
import logging
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

from gesturebench.data.records import SequenceRecord, records_digest
from gesturebench.encoders.checkpoint import encoder_entry, save_encoder
from gesturebench.runtime.atomic import write_atomic
from gesturebench.runtime.caches import CacheEntry
from gesturebench.runtime.stages import stage

log = logging.getLogger(__name__)

#: the encoders shipped with the package: `<encoder>-<dataset>.pt` and its `.json` sidecar, each
#: used only where its sidecar's "trained_on" is the run's training identity
SHIPPED = Path(__file__).resolve().parent / "shipped"
#: the sidecar field holding the training identity of a checkpoint (`EncoderConfig.identity`)
TRAINED_ON = "trained_on"


def trained_on(sidecar: Path) -> Any:
    """The training identity a checkpoint's sidecar records (None: none, or unreadable)."""
    try:
        meta = json.loads(sidecar.read_text())
    except (OSError, ValueError):
        return None
    return meta.get(TRAINED_ON) if isinstance(meta, dict) else None


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
        """The encoder and its info. Without `auto_train`: the checkpoint at `path` (default
        `checkpoint_path`), a missing one being `load`'s `CheckpointError` naming the command that
        creates it (with the run's command-line `overrides`). With `auto_train`, the first of:
        the configured `path` when that file exists (the user's choice, loaded as it is); the
        checkpoint at `checkpoint_path` when it proves its content and was trained on this run's
        identity (else set aside); the shipped encoder of `dataset` when its identity is this
        run's (copied there, then verified like any cache entry); training it on
        `split("train")`/`split("val")` there."""
        configured = path is not None
        path = Path(path) if path is not None else self.checkpoint_path(checkpoints_dir, dataset)
        if not auto_train or (configured and path.is_file()):
            return self.load(path, overrides)
        train, val = split("train"), split("val")
        identity = self.identity(train, val, checkpoints_dir)
        entry = self.entry(path)
        if (loaded := entry.read()) is not None:
            if trained_on(entry.meta_path) == identity:
                return loaded
            entry.set_aside(
                f"trained on other data or with another {self.name} config than this run's"
            )
        if (loaded := self.from_shipped(path, dataset, identity)) is not None:
            return loaded
        with stage(
            f"training the {self.name} encoder on the train split",
            "the learned metrics need it and no checkpoint exists yet",
            kept=str(path),
        ):
            self.train(train, val, path, checkpoints_dir=checkpoints_dir)
        return self.load(path, overrides)

    def identity(
        self,
        train: Sequence[SequenceRecord],
        val: Sequence[SequenceRecord],
        checkpoints_dir: str | Path,
    ) -> dict[str, Any]:
        """What determines the weights of this encoder trained on `train`/`val`: its config and
        the records' `records_digest` (a subclass adds what else it trains from), as JSON reads it
        back."""
        fields = {
            "config": asdict(self),
            "train": records_digest(train),
            "val": records_digest(val),
        }
        return json.loads(json.dumps(fields, default=str))

    def shipped_path(self, dataset: str) -> Path:
        """Where the package ships this encoder for `dataset` (it may not)."""
        return SHIPPED / self.checkpoint_path(".", dataset).name

    def from_shipped(self, path: Path, dataset: str, identity: dict) -> tuple[Any, dict] | None:
        """The shipped encoder of `dataset`, copied to `path` with its sidecar and read back as a
        verified cache entry, when its sidecar records `identity`; else None."""
        shipped = self.shipped_path(dataset)
        sidecar = self.entry(shipped).meta_path
        if not shipped.is_file() or trained_on(sidecar) != identity:
            return None
        entry = self.entry(path)
        meta = json.loads(sidecar.read_text())
        meta["source"] = f"shipped with gesturebench ({shipped.name}), copied to {path}"
        write_atomic(entry.meta_path, json.dumps(meta, indent=1) + "\n")
        with open(shipped, "rb") as src:
            data = src.read()
        write_atomic(path, data)
        loaded = entry.read()  # its SHA-256 and weights verified (set aside if they fail)
        if loaded is not None:
            log.info(
                "%s: the %s encoder shipped with gesturebench (trained on the same data with the "
                "same config; sha256 %s), kept in %s",
                dataset,
                self.name,
                meta.get("sha256"),
                path,
            )
        return loaded

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
        identity: dict[str, Any] | None = None,
    ) -> Path:
        """Train on `train` (seeded by `seed`), early-stop on `val`, write the checkpoint at
        `out_path`, its sidecar recording the training `identity` (default: `identity` of these
        records) and the summary (`fit_module`'s figures with the run's epochs, steps and
        seconds); return it."""
        out_path = Path(out_path)
        entry = self.entry(out_path)
        if identity is None:
            identity = self.identity(train, val, checkpoints_dir)
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
        sha = save_encoder(fitted.module, entry, config, summary, {TRAINED_ON: identity})
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
