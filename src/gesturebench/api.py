"""The Python API, for notebooks and scripts: `evaluate(...)` runs `task=evaluate` in this process
on the config the command line composes from the same overrides, and returns its results.json
document; `load_results(path)` reads results as a pandas DataFrame."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
from hydra import compose, initialize_config_dir, initialize_config_module
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, open_dict

from gesturebench.cli import run_config
from gesturebench.reporting.latex import latex_document
from gesturebench.reporting.results import RESULTS_FILE, scan_results, unreadable_row
from gesturebench.reporting.tables import results_frame
from gesturebench.run.config import register_configs
from gesturebench.runtime.errors import DataError

#: The columns of `load_results` before the metrics.
COLUMNS = ["run", "model", "dataset", "preset", "config_hash"]


def override(key: str, value: Any) -> str:
    """``key=value`` in Hydra's override syntax (True → true, None → null, lists → [a,b])."""
    if isinstance(value, bool) or value is None:
        text = "null" if value is None else str(value).lower()
    elif isinstance(value, list | tuple):
        text = "[" + ",".join(map(str, value)) + "]"
    else:
        text = str(value)
    return f"{key}={text}"


def evaluate(*overrides: str, config_dir: str | Path | None = None, **options: Any) -> dict:
    """Score a model as ``python launch.py OVERRIDES`` does and return the results.json document.

    `overrides` are command-line overrides (``"model=precomputed"``, ``"model.dir=/out"``);
    `options` the same as keywords (``model="mean_pose"``; dotted keys as
    ``**{"model.dir": "/out"}``). `config_dir`: a folder of configs (default: the ones shipped
    with the package, as the `gesturebench` command). The run folder, resume and error types are
    the command line's; a bad input raises the `GestureBenchError` the command prints.
    """
    args = ["task=evaluate", *overrides, *(override(k, v) for k, v in options.items())]
    register_configs()
    init = (
        initialize_config_dir(config_dir=str(Path(config_dir).resolve()), version_base="1.3")
        if config_dir is not None
        else initialize_config_module("gesturebench.conf", version_base="1.3")
    )
    with init:
        cfg = compose(config_name="config", overrides=args, return_hydra_config=True)
    return run_job(cfg)


def run_job(cfg: DictConfig, task: Callable[[DictConfig], Any] = run_config) -> Any:
    """Run `task` on `cfg` (composed with `return_hydra_config=True`) in this process as Hydra's
    single-run job does: the run folder (`hydra.run.dir`) created, Hydra's config set for the run
    and put back afterwards, `task` given the config without its `hydra` node."""
    previous = HydraConfig.instance().cfg
    with open_dict(cfg):
        cfg.hydra.runtime.output_dir = str(Path(cfg.hydra.run.dir).resolve())
        cfg.hydra.job.name = "gesturebench"
        HydraConfig.instance().set_config(cfg)
        del cfg["hydra"]
    Path(HydraConfig.get().runtime.output_dir).mkdir(parents=True, exist_ok=True)
    try:
        return task(cfg)
    finally:
        HydraConfig.instance().cfg = previous


def load_results(path: str | Path, per_sequence: bool = False) -> pd.DataFrame:
    """The complete results under `path` (a results.json, a run folder, or any folder: every
    results.json below it), one row per run: `COLUMNS`, then the headline metrics, then the
    diagnostics. A results.json that cannot be read is named in a warning (the file and the
    problem) and its row marked: `status` `unreadable`, the problem under `error`, no values
    (docs/outputs.md, "Unreadable results"). `per_sequence`: one row per run and sequence instead
    (its per_sequence values; an unreadable run has none). Raises `DataError` naming `path` where
    it holds no results.json, or none complete and none unreadable (an empty table would only fail
    later, on a missing column)."""
    rows = complete_runs(Path(path))
    if not per_sequence:
        return results_frame(rows, COLUMNS)
    return pd.DataFrame(
        [
            {"run": row["run"], "model": row["model"], "dataset": row["dataset"], **sequence}
            for row in rows
            for sequence in row.get("per_sequence", [])
        ]
    )


def complete_runs(path: Path) -> list[dict]:
    """The complete, committed results.json documents at or below `path`, each with its `run`
    folder, and a row marked `unreadable` for each one that cannot be read (`scan_results`)."""
    if not path.exists():
        raise DataError(path, "no such file or folder")
    files = scan_results([path])
    if not files:
        raise DataError(path, f"no {RESULTS_FILE} in this folder or below it")
    rows = []
    for file in files:
        if file.problem is not None:
            rows.append({**unreadable_row(file), "config_hash": None})
        elif file.doc and file.doc.get("complete"):
            rows.append({**file.doc, "run": str(file.path.parent)})
    if not rows:
        raise DataError(
            path, f"{len(files)} {RESULTS_FILE}, none complete (runs still going or stopped)"
        )
    return rows


def latex_table(path: str | Path, interval: str = "bracket") -> str:
    """The LaTeX document (booktabs tables, one per preset, dataset and split) of the complete runs
    at or below `path`, each value with its interval as `interval` says ("bracket", "pm" or
    "none"); docs/outputs.md, "LaTeX tables"."""
    return latex_document(complete_runs(Path(path)), interval)
