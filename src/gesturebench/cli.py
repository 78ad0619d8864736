"""The entry point (`launch.py` in a checkout, the `gesturebench` console script once installed):
compose the config, build the task from its `_target_` and run it; errors become one line."""

from __future__ import annotations

import difflib
import os
import sys
import traceback
from pathlib import Path

import hydra
import torch
from hydra._internal.config_repository import ConfigRepository
from hydra._internal.utils import create_config_search_path
from hydra.core.config_search_path import ConfigSearchPath
from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from hydra.types import RunMode
from omegaconf import DictConfig
from omegaconf.errors import MissingMandatoryValue

from gesturebench.reporting.results import ERROR_FILE, write_json
from gesturebench.run.config import build, register_configs
from gesturebench.runtime import status
from gesturebench.runtime.atomic import one_line, write_atomic
from gesturebench.runtime.errors import ConfigError, GestureBenchError
from gesturebench.runtime.quiet import silence_known_noise
from gesturebench.runtime.stages import show_bars

#: a failed job's traceback, beside its error.json
TRACEBACK_FILE = "traceback.txt"

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
    """Build `task` (its `_target_`) and run it on `cfg`; any exception becomes one line on stderr
    and a failed job: a GestureBenchError (or a mandatory value left unset) is the user's to fix
    (exit 2), any other exception is unexpected (exit 1; its traceback written to a file named on
    that line).

    In a single run the process exits at once; in a multirun the job is recorded as failed
    (error.json and traceback.txt in its folder) so that the other jobs still run and the sweep's
    summary names it, and the command exits non-zero at the end.
    """
    try:
        return run_config(cfg)
    except Exception as err:
        if os.environ.get("HYDRA_FULL_ERROR") == "1":
            raise
        expected = isinstance(err, GestureBenchError)
        where = _record_failure(cfg, err)
        line = str(err) if expected else f"unexpected {type(err).__name__}: {one_line(err)}"
        print(f"error: {line}" + (f" (traceback: {where})" if where else ""), file=sys.stderr)
        status.mark_failed(2 if expected else 1)
        if not _is_multirun():
            sys.exit(status.exit_code())
        return None


def _is_multirun() -> bool:
    return HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN


def _record_failure(cfg: DictConfig, err: Exception) -> Path | None:
    """error.json (task, model, dataset, message, type, sweep id) and traceback.txt in the job's
    folder; the traceback file's path (None outside Hydra)."""
    if not HydraConfig.initialized():
        return None
    out = Path(HydraConfig.get().runtime.output_dir)
    trace = out / TRACEBACK_FILE
    write_atomic(trace, traceback.format_exc())
    write_json(
        out / ERROR_FILE,
        {
            "task": cfg.task.name,
            "model": cfg.model.get("name"),
            "dataset": cfg.dataset.name,
            "error": one_line(err),
            "error_type": type(err).__name__,
            "traceback_file": TRACEBACK_FILE,
            "sweep_id": os.environ.get("GESTUREBENCH_SWEEP_ID"),
        },
    )
    return trace


def unknown_option(config_path: str, args: list[str]) -> str | None:
    """The one-line reason when a `group=option` of the command line `args` names no option of its
    group (with the closest options), or a `group.sub=option` sets a config group as a key (the old
    ``model.source=outputs`` for ``model/source=outputs``), else None. Hydra's own message is many
    lines long."""
    try:
        overrides = OverridesParser.create().parse_overrides(
            [a for a in args if not a.startswith("-")]
        )
    except HydraException:
        return None  # a syntax error: Hydra's message says where
    repository = ConfigRepository(_search_path(config_path, args, overrides))
    for override in overrides:
        group = override.key_or_group
        as_group = group.replace(".", "/")
        if "." in group and not override.is_delete() and repository.group_exists(as_group):
            # a config group (e.g. model/source) given as a key: say how to choose its option
            chosen = override.get_value_element_as_str()
            return (
                f"{group}={chosen}: {as_group} is a config group, "
                f"choose its option with {as_group}={chosen}"
            )
        if override.is_delete() or group.startswith("hydra") or not repository.group_exists(group):
            continue
        value = override.value()
        choices = (
            list(override.sweep_string_iterator()) if override.is_sweep_override() else [value]
        )
        offered = repository.get_group_options(group)
        for choice in choices:
            if isinstance(choice, str) and choice not in offered:
                close = difflib.get_close_matches(choice, offered, n=3, cutoff=0.5)
                hint = f" (did you mean {' or '.join(close)}?)" if close else ""
                listed = ", ".join(offered)
                return f"{group}={choice} is not an option of {group}{hint}; options: {listed}"
    return None


def _search_path(config_path: str, args: list[str], overrides: list) -> ConfigSearchPath:
    """Hydra's config search path for `args`: the primary configs, then `--config-dir` and
    `hydra.searchpath=[...]` folders (a user's own model configs live there)."""
    search_path = create_config_search_path(config_path)
    for i, arg in enumerate(args):
        if arg in ("--config-dir", "-cd") and i + 1 < len(args):
            search_path.append("command-line", f"file://{Path(args[i + 1]).resolve()}")
        elif arg.startswith("--config-dir="):
            search_path.append("command-line", f"file://{Path(arg.split('=', 1)[1]).resolve()}")
    for override in overrides:
        if override.key_or_group == "hydra.searchpath" and isinstance(override.value(), list):
            for folder in override.value():
                search_path.append("command-line", str(folder))
    return search_path


def launch(config_path: str = PACKAGED_CONFIGS) -> None:
    """Run Hydra's command line with the configs at `config_path` and exit with the run's status; a
    mistyped group option is one line and exit 2."""
    register_configs()
    if reason := unknown_option(config_path, sys.argv[1:]):
        print(f"error: {reason}", file=sys.stderr)
        sys.exit(2)
    hydra.main(config_path=config_path, config_name="config", version_base="1.3")(run_task)()
    sys.exit(status.exit_code())


def main() -> None:
    """Console script `gesturebench`: the configs shipped with the package, from any folder."""
    launch()
