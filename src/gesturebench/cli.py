"""Task dispatch and error reporting for `launch.py` (and the `gesturebench` console script)."""

from __future__ import annotations

import importlib
import os
import runpy
import sys
import traceback
from pathlib import Path

import torch
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

from gesturebench import status
from gesturebench.config import repo_root
from gesturebench.errors import ConfigError, GestureBenchError
from gesturebench.results import ERROR_FILE, write_json

TASKS = ("evaluate", "make_data", "train_encoder", "annotate", "analyze")


def run_task(cfg: DictConfig):
    """Run `tasks.<task.name>.run(cfg)`; a GestureBenchError becomes one line on stderr and a failed
    job.

    In a single run the process exits 2 at once; in a multirun the job is recorded as failed
    (error.json in its folder) so that the other jobs still run, and `launch.py` exits 2 at the end.
    """
    if cfg.get("threads"):
        torch.set_num_threads(cfg.threads)
    try:
        name = cfg.task.name
        if name not in TASKS:
            raise ConfigError(f"task={name} is not available; choose one of {', '.join(TASKS)}")
        try:
            module = importlib.import_module(f"gesturebench.tasks.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"gesturebench.tasks.{name}":
                raise
            raise ConfigError(
                f"task={name} is not implemented in this version of gesturebench"
            ) from None
        return module.run(cfg)
    except GestureBenchError as err:
        if os.environ.get("HYDRA_FULL_ERROR") == "1":
            raise
        _record_failure(cfg, err)
        print(f"error: {err}", file=sys.stderr)
        status.mark_failed()
        if not _is_multirun():
            sys.exit(2)
        return None


def _is_multirun() -> bool:
    return HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN


def _record_failure(cfg: DictConfig, err: Exception) -> None:
    if not HydraConfig.initialized():
        return
    out = Path(HydraConfig.get().runtime.output_dir)
    write_json(
        out / ERROR_FILE,
        {
            "task": cfg.task.name,
            "model": cfg.model.get("name"),
            "dataset": cfg.dataset.name,
            "error": str(err),
            "error_type": type(err).__name__,
            "traceback": traceback.format_exc(),
            "sweep_id": os.environ.get("GESTUREBENCH_SWEEP_ID"),
        },
    )


def main() -> None:
    """Console script `gesturebench`: runs the checkout's launch.py with the same arguments."""
    launch = repo_root() / "launch.py"
    if not launch.exists():
        sys.exit(f"error: launch.py not found next to the package (looked in {launch.parent})")
    sys.argv[0] = str(launch)
    runpy.run_path(str(launch), run_name="__main__")
