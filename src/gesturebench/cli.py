"""The entry point (`launch.py` in a checkout, the `gesturebench` console script once installed):
compose the config, build the task from its `_target_` and run it; errors and stopping signals
become one line.

What the job's process holds beyond the config is read here, once, and handed down as values: the
job (`tasks.job.Job`: run folder, choices, overrides, and the multirun's id from the environment
that carries it to a launcher's workers), whether bars are drawn (`runtime.stages.bars_shown`) and
the launch's exit status (`runtime.status`)."""

from __future__ import annotations

import os
import signal
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import cast

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import MissingMandatoryValue

from gesturebench.reporting.results import ERROR_FILE, write_json
from gesturebench.run.config import build, register_configs
from gesturebench.run.overrides import config_problem, unknown_option
from gesturebench.runtime import signals, status
from gesturebench.runtime.atomic import one_line, write_atomic
from gesturebench.runtime.errors import ConfigError, GestureBenchError, Interrupted, os_problem
from gesturebench.runtime.process_exit import exit_process
from gesturebench.runtime.quiet import silence_known_noise
from gesturebench.runtime.stages import bars_shown
from gesturebench.runtime.threads import thread_budget
from gesturebench.tasks.job import SWEEP_ID_VARIABLE, Job

#: a failed job's traceback, beside its error.json
TRACEBACK_FILE = "traceback.txt"

#: The configs shipped inside the package (`conf/` of the checkout, as package data).
PACKAGED_CONFIGS = "pkg://gesturebench.conf"

#: set by `launch` beside the HYDRA_FULL_ERROR=1 it sets itself (so that Hydra raises its errors to
#: `launch` instead of printing them), to tell it from the user's own (tracebacks wanted)
_HYDRA_RAISES = "GESTUREBENCH_HYDRA_RAISES"


def run_config(cfg: DictConfig):
    """Build `task` and run it on `cfg` and this process's job (the Python API; `run_task` does the
    same for the command line, its errors as one line), the stages' bars shown as
    `trainer.enable_progress_bar` says; a mandatory value left unset (`???`) is a `ConfigError`
    naming it."""
    with _running(cfg):
        return build(cfg.task)(cfg, _job())


@contextmanager
def _running(cfg: DictConfig) -> Iterator[None]:
    """What a task runs in: known noise silenced, `threads` threads (`thread_budget`), the bars
    as `trainer.enable_progress_bar` says; a mandatory value left unset (`???`) is a `ConfigError`
    naming it."""
    silence_known_noise()
    try:
        with (
            thread_budget(cfg.get("threads")),
            bars_shown(cfg.trainer.get("enable_progress_bar", True)),
        ):
            yield
    except MissingMandatoryValue as err:
        raise ConfigError(
            f"{err.full_key} is not set: add {err.full_key}=... to the command line"
        ) from None


def run_task(cfg: DictConfig):
    """Build `task` (its `_target_`) and run it on `cfg` and this process's job (Hydra calls this
    with the composed config: the task is the next call); any exception becomes one line on
    stderr and a failed job: a GestureBenchError, a mandatory value left unset or a full or
    unwritable disk is the user's to fix (exit 2), any other exception is unexpected (exit 1; its
    traceback written to a file named on that line).

    In a single run the process exits at once; in a multirun the job is recorded as failed
    (error.json and traceback.txt in its folder) so that the other jobs still run and the sweep's
    summary names it, and the command exits non-zero at the end. A stopping signal (SIGTERM,
    SIGHUP) is recorded the same way and ends the process at once, a sweep too (its re-run resumes
    it). A job that succeeds removes the error record an earlier try of its folder left.
    """
    signals.install()
    try:
        with _running(cfg):
            result = build(cfg.task)(cfg, _job())
    except (Interrupted, SystemExit) as err:
        stop = err if isinstance(err, Interrupted) else _lightning_sigterm(err)
        if stop is None:
            raise
        _fail(stop, cfg)
        sys.exit(stop.exit_code)
    except Exception as err:
        if _full_error():
            raise
        code = _fail(err, cfg)
        if not _is_multirun():
            sys.exit(code)
        return None
    _clear_failure()
    return result


def _lightning_sigterm(stopped: SystemExit) -> Interrupted | None:
    """A SIGTERM's `Interrupted` where `stopped` is how a rank that Lightning told of another rank's
    SIGTERM stops (its SIGTERMException, a SystemExit with status 0), else None. Lightning is
    imported here rather than with this module (see `runtime.stages.bar`)."""
    from pytorch_lightning.utilities.exceptions import SIGTERMException

    return Interrupted(signal.SIGTERM) if isinstance(stopped, SIGTERMException) else None


def _job() -> Job:
    """The job this process runs, of the multirun whose id the environment carries (if any)."""
    return Job.of_hydra(_sweep_id())


def _sweep_id() -> str | None:
    """The id of the multirun this job belongs to, as its launcher passed it (None: no multirun)."""
    return os.environ.get(SWEEP_ID_VARIABLE)


def _is_multirun() -> bool:
    return HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN


def _full_error() -> bool:
    """Whether the user asked for tracebacks (HYDRA_FULL_ERROR=1 of their own, not `launch`'s)."""
    return os.environ.get("HYDRA_FULL_ERROR") == "1" and os.environ.get(_HYDRA_RAISES) != "1"


def _fail(
    err: BaseException, cfg: DictConfig | None, config: tuple[str, list[str]] | None = None
) -> int:
    """Record `err` (in the job's folder, where there is one), print its one line and mark the
    launch failed; return its exit status. `config`: the config path and command line, to explain
    an error of Hydra's composing them."""
    line, code = _describe(err, config)
    where = _record_failure(err, line, code, cfg)
    print(f"error: {line}" + (f" (traceback: {where})" if where else ""), file=sys.stderr)
    status.current().mark_failed(code)
    return code


def _describe(err: BaseException, config: tuple[str, list[str]] | None) -> tuple[str, int]:
    """The one line and exit status of `err`: 128 + its number for a stopping signal, 2 for what
    the user can fix, 1 for anything unexpected."""
    if isinstance(err, Interrupted):
        return str(err), err.exit_code
    if isinstance(err, GestureBenchError):
        return str(err), 2
    line = os_problem(err, _job_folder()) or (config and config_problem(err, *config))
    if line:
        return line, 2
    return f"unexpected {type(err).__name__}: {one_line(err)}", 1


def _job_folder() -> Path | None:
    """The folder of the job this process runs (None outside Hydra, or before Hydra made it)."""
    if not HydraConfig.initialized():
        return None
    hydra_node = cast(DictConfig, HydraConfig.get())  # a DictConfig typed as its schema
    out = OmegaConf.select(hydra_node, "runtime.output_dir")  # unset (???) under --cfg
    return Path(out) if out and Path(out).is_dir() else None


def _record_failure(
    err: BaseException, line: str, code: int, cfg: DictConfig | None
) -> Path | None:
    """error.json (task, model, dataset, message, type, signal, exit status, sweep id) and
    traceback.txt in the job's folder; the traceback file's path. Best effort: None where there is
    no folder or it cannot be written (a full disk must not raise a second error). Outside a job
    (`cfg` None: `launch` caught it), only a single run's folder is the job's."""
    out = _job_folder()
    if out is None or (cfg is None and _is_multirun()):
        return None
    choices = HydraConfig.get().runtime.choices
    trace = out / TRACEBACK_FILE
    try:
        write_atomic(trace, traceback.format_exc())
        write_json(
            out / ERROR_FILE,
            {
                "task": cfg.task.name if cfg else choices.get("task"),
                "model": cfg.model.get("name") if cfg else choices.get("model"),
                "dataset": cfg.dataset.name if cfg else choices.get("dataset"),
                "error": line,
                "error_type": type(err).__name__,
                "signal": signal.Signals(err.signum).name if isinstance(err, Interrupted) else None,
                "exit_code": code,
                "traceback_file": TRACEBACK_FILE,
                "sweep_id": _sweep_id(),
            },
        )
    except OSError:
        return None
    return trace


def _clear_failure() -> None:
    """Remove the error record of an earlier try of this job's folder (its re-run succeeded)."""
    out = _job_folder()
    for name in (ERROR_FILE, TRACEBACK_FILE):
        if out is not None:
            with suppress(OSError):
                (out / name).unlink(missing_ok=True)


def launch(config_path: str = PACKAGED_CONFIGS) -> None:
    """Run Hydra's command line with the configs at `config_path` and exit with the run's status.

    Whatever stops it is one line on stderr: a mistyped group option or key, a bad value or a
    config file that does not load (exit 2), a run folder that cannot be made (exit 2), a stopping
    signal (128 + its number). Hydra is asked to raise its errors (HYDRA_FULL_ERROR=1, marked as
    `launch`'s own) rather than print them; the user's own HYDRA_FULL_ERROR=1 still shows the
    tracebacks."""
    register_configs()
    signals.install()
    args = sys.argv[1:]
    if reason := unknown_option(config_path, args):
        print(f"error: {reason}", file=sys.stderr)
        sys.exit(2)
    full = _full_error()
    if not full:
        os.environ.update({"HYDRA_FULL_ERROR": "1", _HYDRA_RAISES: "1"})
    with status.opened() as launched:
        try:
            main = hydra.main(config_path=config_path, config_name="config", version_base="1.3")
            main(run_task)()
        except Interrupted as err:
            sys.exit(_fail(err, None))
        except Exception as err:
            if full:
                raise
            sys.exit(_fail(err, None, (config_path, args)))
    sys.exit(launched.code)


def launch_process(config_path: str = PACKAGED_CONFIGS) -> None:
    """`launch` as the whole of a process (`launch.py`, the console script): its exit status ends
    the process once the exit handlers have run, without the interpreter's teardown
    (`runtime.process_exit`)."""
    try:
        launch(config_path)
    except SystemExit as done:
        exit_process(done.code)


def main() -> None:
    """Console script `gesturebench`: the configs shipped with the package, from any folder."""
    launch_process()
