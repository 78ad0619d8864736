"""Run loggers (W&B offline by default, CSV, none) and what the evaluate task logs to them."""

from __future__ import annotations

import os
from pathlib import Path

from pytorch_lightning.loggers import CSVLogger, Logger, WandbLogger

from gesturebench.errors import ConfigError


def make_logger(cfg, run_dir: Path, run_name: str, config: dict) -> Logger | None:
    """Lightning logger for `logger.name` ∈ wandb, csv, none; its files live inside the run folder."""
    if cfg.name == "none":
        return None
    if cfg.name == "csv":
        return CSVLogger(save_dir=str(run_dir), name="csv_logs")
    if cfg.name == "wandb":
        os.environ.setdefault("WANDB_MODE", cfg.mode)
        os.environ.setdefault("WANDB_SILENT", "true")
        return WandbLogger(
            project=cfg.project,
            entity=cfg.entity,
            name=run_name,
            save_dir=str(run_dir),
            mode=os.environ["WANDB_MODE"],
            config=config,
        )
    raise ConfigError(f"logger.name={cfg.name!r} is not one of wandb, csv, none")


def finish(logger: Logger | None) -> None:
    """Close the logger's run so that the next multirun job starts its own."""
    if isinstance(logger, WandbLogger):
        import wandb

        wandb.finish()
    elif logger is not None:
        logger.finalize("success")


def log_results(logger: Logger | None, results: dict, clip: Path | None) -> None:
    """Scalars, the per-sequence table and a rendered clip (W&B only for the last two)."""
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
        if clip is not None:
            import wandb

            logger.experiment.log({"clip": wandb.Video(str(clip), format="mp4")})
