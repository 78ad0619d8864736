"""Run loggers (`conf/logger/*`: W&B offline by default, CSV, none) and what the tasks log to
them.

A W&B run is grouped by its sweep's id and tagged (model, dataset, metrics preset); an evaluation
puts its metrics in the run summary and results.json + per_sequence.csv in a `results` artifact;
the end of a sweep logs its summary (and comparisons) as tables of one more run of its group, in
the sweep's own folder. Since an offline run folder holds W&B's records only in its binary `.wandb`
log, the same summary, group, tags, artifact files and tables are also written as
`files/gesturebench_summary.json` there (readable without syncing, and synced with the run).

A task hands these functions the configured logger as a factory (`LoggerFactory`: the class with
its configured options bound, built once by the task); each run here gives it its folder and
name."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pydantic
from pytorch_lightning.loggers import Logger, WandbLogger

from gesturebench.runtime.errors import ConfigError
from gesturebench.runtime.quiet import drop_anonymous

#: the readable copy of what an evaluation logs to a W&B run, in the run's files folder
OFFLINE_SUMMARY = "gesturebench_summary.json"

#: the configured logger (`cfg.logger` built with `_partial_`): called with a run's `save_dir` and
#: `name` (and, for W&B, `group` and `tags`), it makes that run's logger
LoggerFactory = Callable[..., Logger]


def is_wandb(factory: LoggerFactory | None) -> bool:
    """Whether `factory` (None: no logger) makes W&B loggers."""
    made = getattr(factory, "func", factory)
    return isinstance(made, type) and issubclass(made, WandbLogger)


@contextmanager
def logged(
    factory: LoggerFactory | None,
    run_dir: Path,
    run_name: str,
    config: dict,
    tags: tuple[str, ...] = (),
    sweep_id: str | None = None,
) -> Iterator[Logger | None]:
    """For the block, the logger `factory` makes (None: no logger) for a run named `run_name`, its
    files in `run_dir`, with the run's resolved `config` as hyperparameters; a W&B run also grouped
    by `sweep_id` (its multirun's; None outside one) and tagged with `tags`. Its run is finished
    when the block ends, by an error too, so that the next multirun job starts its own, its files
    complete.

    W&B's service process writes a run's records (the `.wandb` log) when it closes the run, which
    it does after `wandb.finish` has returned; `wandb.teardown` waits for that (the next run starts
    a fresh service), so a reader, `wandb sync` or a launcher ending its worker finds them all."""
    if factory is None:
        yield None
        return
    os.environ.setdefault("WANDB_SILENT", "true")
    run: dict[str, Any] = {}
    if is_wandb(factory):
        run = {"group": sweep_id, "tags": list(tags)}
    logger: Logger = drop_anonymous(factory(save_dir=str(run_dir), name=run_name, **run))
    try:
        try:
            logger.log_hyperparams(config)  # a W&B run starts here
        except pydantic.ValidationError as err:  # W&B's own check of its settings
            raise ConfigError(f"W&B refused its settings: {_settings_errors(err)}") from None
        yield logger
    finally:
        if isinstance(logger, WandbLogger):
            import wandb

            wandb.finish()
            wandb.teardown()
        else:
            logger.finalize("success")


def _settings_errors(err: pydantic.ValidationError) -> str:
    """Each refused W&B setting with the environment variable that sets it and the value given."""
    return "; ".join(
        f"{'.'.join(map(str, e['loc']))} (WANDB_{str(e['loc'][0]).upper()}): {e['msg']}, got "
        f"{e.get('input')!r}"
        for e in err.errors()
    )


def log_results(
    logger: Logger | None,
    results: dict,
    clips: Sequence[Path] = (),
    files: tuple[Path, ...] = (),
) -> None:
    """Scalars (each value with a bootstrap interval also as `<name>_lo` and `<name>_hi`), then on
    W&B: the same as run summary values, the per-sequence table, `files` (results.json,
    per_sequence.csv) as an artifact, the rendered clips, and the offline summary."""
    if logger is None:
        return
    values = {k: v for k, v in results["metrics"].items() if v is not None}
    for k, (lo, hi) in results.get("intervals", {}).items():
        values.update({f"{k}_lo": lo, f"{k}_hi": hi})
    logger.log_metrics({f"test/{k}": v for k, v in values.items()})
    if isinstance(logger, WandbLogger):
        import wandb

        run = logger.experiment
        run.summary.update(values)
        artifact = wandb.Artifact(f"results-{run.id}", type="results")
        for path in files:
            artifact.add_file(str(path))
        run.log_artifact(artifact)
        stored = {"name": artifact.name, "type": "results", "files": [p.name for p in files]}
        write_offline(run, summary=values, artifact=stored)
        rows = results["per_sequence"]
        if rows:
            columns = list(dict.fromkeys(k for row in rows for k in row))
            logger.log_table(
                "per_sequence",
                columns=columns,
                data=[[row.get(c) for c in columns] for row in rows],
            )
        if clips:
            logger.experiment.log(
                {f"clips/{clip.stem}": wandb.Video(str(clip), format="mp4") for clip in clips}
            )


def write_offline(run: Any, **contents: Any) -> None:
    """`contents`, with the run's name, group and tags, as the run's readable
    `files/gesturebench_summary.json`."""
    doc = {"name": run.name, "group": run.group, "tags": list(run.tags), **contents}
    Path(run.dir, OFFLINE_SUMMARY).write_text(json.dumps(doc, indent=2) + "\n")


def log_sweep_tables(
    factory: LoggerFactory | None, folder: Path, sweep_id: str, tables: dict[str, Path]
) -> None:
    """With a W&B `factory`: the CSV `tables` (key → file: the sweep's summary and comparisons) as
    W&B tables of a run `sweep-<id>` in `folder`, grouped by `sweep_id`, and as {"columns", "data"}
    in its offline summary; nothing with another logger."""
    if not is_wandb(factory):
        return
    frames = {key: pd.read_csv(path) for key, path in tables.items()}
    with logged(factory, folder, f"sweep-{sweep_id[:8]}", {}, ("sweep",), sweep_id) as logger:
        assert isinstance(logger, WandbLogger)
        for key, frame in frames.items():  # empty cells as None, not NaN, in a text column
            logger.log_table(key, dataframe=frame.astype(object).where(frame.notna(), None))
        readable = {k: f.to_json(orient="split", index=False) for k, f in frames.items()}
        write_offline(logger.experiment, tables={k: json.loads(t) for k, t in readable.items()})
