"""Run loggers (`conf/logger/*`: W&B offline by default, CSV, none) and what the tasks log to
them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytorch_lightning.loggers import Logger, WandbLogger

from gesturebench.config import build
from gesturebench.quiet import drop_anonymous


def make_logger(node: Any, run_dir: Path, run_name: str, config: dict) -> Logger | None:
    """The Lightning logger of `node` (`cfg.logger`; None: no logger) named `run_name`, its files in
    `run_dir`, with the run's resolved `config` as hyperparameters."""
    if node is None:
        return None
    os.environ.setdefault("WANDB_SILENT", "true")
    logger: Logger = drop_anonymous(build(node, save_dir=str(run_dir), name=run_name))
    logger.log_hyperparams(config)
    return logger


def finish(logger: Logger | None) -> None:
    """Close the logger's run so that the next multirun job starts its own."""
    if isinstance(logger, WandbLogger):
        import wandb

        wandb.finish()
    elif logger is not None:
        logger.finalize("success")


def log_results(logger: Logger | None, results: dict, clips: Sequence[Path] = ()) -> None:
    """Scalars, the per-sequence table and the rendered clips (W&B only for the last two)."""
    if logger is None:
        return
    scalars = {f"test/{k}": v for k, v in results["metrics"].items() if v is not None}
    logger.log_metrics(scalars)
    if isinstance(logger, WandbLogger):
        rows = results["per_sequence"]
        if rows:
            columns = list(dict.fromkeys(k for row in rows for k in row))
            logger.log_table(
                "per_sequence",
                columns=columns,
                data=[[row.get(c) for c in columns] for row in rows],
            )
        if clips:
            import wandb

            logger.experiment.log(
                {f"clips/{clip.stem}": wandb.Video(str(clip), format="mp4") for clip in clips}
            )
