"""The entry point (`launch.py` in a checkout, the `gesturebench` console script once installed):
compose the config, build the task from its `_target_` and run it; errors become one line."""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

import hydra
import torch
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig
from omegaconf.errors import MissingMandatoryValue

from gesturebench import status
from gesturebench.config import build, register_configs
from gesturebench.errors import ConfigError, GestureBenchError
from gesturebench.quiet import silence_known_noise
from gesturebench.results import ERROR_FILE, write_json
from gesturebench.stages import show_bars

#: The configs shipped inside the package (`conf/` of the checkout, as package data).
PACKAGED_CONFIGS = "pkg://gesturebench.conf"


def run_config(cfg: DictConfig):
    """Build `task` and run it on `cfg` (the command line and the Python API alike), the stages'
    bars shown as `trainer.enable_progress_bar` says; a mandatory value left unset (`???`) is a
    `ConfigError` naming it."""
    silence_known_noise()
    show_bars(cfg.trainer.get("enable_progress_bar", True))
    if cfg.get("threads"):
        torch.set_num_threads(cfg.threads)
    try:
        return build(cfg.task)(cfg)
    except MissingMandatoryValue as err:
        raise ConfigError(
            f"{err.full_key} is not set: add {err.full_key}=... to the command line"
        ) from None


def run_task(cfg: DictConfig):
    """Build `task` (its `_target_`) and run it on `cfg`; a GestureBenchError, or a mandatory value
    left unset (`???`), becomes one line on stderr and a failed job.

    In a single run the process exits 2 at once; in a multirun the job is recorded as failed
    (error.json in its folder) so that the other jobs still run, and the command exits 2 at the end.
    """
    try:
        return run_config(cfg)
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


def launch(config_path: str = PACKAGED_CONFIGS) -> None:
    """Run Hydra's command line with the configs at `config_path` and exit with the run's status."""
    register_configs()
    hydra.main(config_path=config_path, config_name="config", version_base="1.3")(run_task)()
    sys.exit(status.exit_code())


def main() -> None:
    """Console script `gesturebench`: the configs shipped with the package, from any folder."""
    launch()
