"""Run `launch.py` as a real subprocess, the way a user does (`launch`), or the same run in the test
process (`run`, through conftest's `in_process` fixture), inside the session's sandbox: its data,
cache, checkpoints and run folders are temporary, so that no test writes into the checkout."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple
from unittest import mock

import pytest
import torch

from gesturebench import cli
from gesturebench.api import run_job
from gesturebench.cli import run_task
from gesturebench.runtime import signals
from tests.helpers import CONF, REPO, composed

#: the environment of every run: W&B offline and quiet
RUN_ENV = {"WANDB_MODE": "offline", "WANDB_SILENT": "true"}


class Sandbox:
    """A session's `paths.data`, `paths.cache` and `paths.checkpoints` under `root`, plus a fresh
    run folder for each launched run that does not name its own.

    `checkpoints/body_models` links to the checkout's folder where there is one, so that a body
    model file put there (or the procedural one, generated once) is still the one used."""

    def __init__(self, root: Path):
        self.root = root
        self.data, self.cache, self.checkpoints = (
            root / "data",
            root / "cache",
            root / "checkpoints",
        )
        for folder in (self.data, self.cache, self.checkpoints, root / "runs"):
            folder.mkdir(parents=True, exist_ok=True)
        body_models = REPO / "checkpoints" / "body_models"
        if body_models.is_dir():
            (self.checkpoints / "body_models").symlink_to(body_models, target_is_directory=True)
        self._encoders_trained = False

    @property
    def overrides(self) -> tuple[str, ...]:
        return (
            f"paths.data={self.data}",
            f"paths.cache={self.cache}",
            f"paths.checkpoints={self.checkpoints}",
        )

    def run_overrides(self) -> tuple[str, ...]:
        """A new run and sweep folder: the defaults of a launched run that names neither."""
        run = Path(tempfile.mkdtemp(dir=self.root / "runs"))
        return f"hydra.run.dir={run / 'run'}", f"hydra.sweep.dir={run / 'sweep'}"

    def train_encoders(self) -> Path:
        """mini-BEAT2's two encoders in the sandbox's checkpoints, once per session and in this
        process, as a first run gets them: the ones shipped with the package, copied where their
        training identity is this data's (`EncoderConfig.load_or_train`), else trained here on one
        torch thread (a run that needs them would otherwise get them during a test, or two jobs of
        a sweep at once); return the checkpoints folder."""
        if not self._encoders_trained:
            from gesturebench.encoders.ship import DATASET, mini_splits, shipped_configs
            from gesturebench.runtime.threads import thread_budget
            from gesturebench.synthesis.mini.dataset import ensure_mini_beat2

            splits = mini_splits(ensure_mini_beat2(self.data / "mini_beat2_default"))
            with thread_budget(1):
                for config in shipped_configs():
                    config.load_or_train(self.checkpoints, DATASET, splits.__getitem__, True)
            self._encoders_trained = True
        return self.checkpoints


# the session's sandbox, set by conftest's `sandbox` fixture
SANDBOX: Sandbox | None = None


def _sandbox() -> Sandbox:
    if SANDBOX is None:
        raise RuntimeError("tests.launch needs conftest's `sandbox` fixture (run it under pytest)")
    return SANDBOX


def _own_root(overrides: tuple[str, ...]) -> bool:
    """Whether the caller sets `paths.root` (its data, cache and checkpoints folders then live
    under it)."""
    return any(o.startswith("paths.root=") for o in overrides)


def command(*overrides: str, env: dict | None = None) -> tuple[list[str], dict]:
    """The command line and environment of `python launch.py OVERRIDES…`, quiet and offline, in the
    sandbox: its folders come first, so the caller's overrides win."""
    run_env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    run_env.update({**RUN_ENV, **(env or {})})
    flags = [o for o in overrides if o.startswith("-")]
    rest = [o for o in overrides if not o.startswith("-")]
    return [sys.executable, str(REPO / "launch.py"), *flags, *_sandboxed(rest)], run_env


def _sandboxed(overrides: list[str]) -> list[str]:
    """`overrides` after the sandbox's folders, a fresh run folder and no progress bars."""
    sandbox = _sandbox()
    return [
        "trainer.enable_progress_bar=false",
        *(() if _own_root(tuple(overrides)) else sandbox.overrides),
        *sandbox.run_overrides(),
        *overrides,
    ]


def launch(
    *overrides: str, timeout: int = 600, env: dict | None = None, encoders: bool = True
) -> subprocess.CompletedProcess:
    """Run `command(*overrides, env=env)` from the repository root, its output captured, the
    sandbox's encoders trained first (`encoders=False`: not, for a run that fails before it
    would use them)."""
    if encoders and not _own_root(overrides):
        _sandbox().train_encoders()
    cmd, run_env = command(*overrides, env=env)
    return subprocess.run(
        cmd, cwd=REPO, env=run_env, capture_output=True, text=True, timeout=timeout
    )


def run(*overrides: str, encoders: bool = True) -> Any:
    """What `launch(*overrides)` runs, in this process, with the same sandbox overrides. A single
    run is composed and its task run by `run_task` as `launch.py` runs it (an error is one line on
    stderr and `SystemExit` with the exit status); it returns the task's return value. With `-m`,
    Hydra's own command line runs the sweep (the basic launcher runs the jobs one after another,
    its callbacks write the summary); it returns the exit status. Call it through conftest's
    `in_process` fixture (or within `isolated()`), which puts back the process-global state a run
    changes."""
    if encoders and not _own_root(overrides):
        _sandbox().train_encoders()
    flags = [o for o in overrides if o.startswith("-")]
    rest = _sandboxed([o for o in overrides if not o.startswith("-")])
    if "-m" not in flags:
        return run_job(composed(*rest, hydra=True), run_task)
    argv = [str(REPO / "launch.py"), *flags, *rest]
    with mock.patch.object(sys, "argv", argv), pytest.raises(SystemExit) as stop:
        cli.launch(str(CONF))
    return stop.value.code


@contextmanager
def isolated() -> Iterator[None]:
    """Put back what a run in this process changes process-wide, as a fresh process would start:
    Hydra's config, the root logger (INFO, as Hydra's job logging sets it; its handlers), the
    loggers' filters and levels, any W&B run left open, torch's thread count, the warnings filters
    and the environment (W&B offline and quiet, as in `launch`), the handlers of the stopping
    signals. (The exit status and the stages' bars are the launch's own: nothing to put back.)"""
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig

    root = logging.getLogger()
    handlers = set(root.handlers)
    loggers = {
        logger: (logger.level, logger.filters[:])
        for logger in (root, *logging.Logger.manager.loggerDict.values())
        if isinstance(logger, logging.Logger)
    }
    threads = torch.get_num_threads()
    on_signal = {signum: signal.getsignal(signum) for signum in signals.STOPPING}
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
        for key, value in RUN_ENV.items():
            mp.setenv(key, value)
        mp.delenv("HYDRA_FULL_ERROR", raising=False)
        environ = dict(os.environ)
        root.setLevel(logging.INFO)
        try:
            yield
        finally:
            wandb = sys.modules.get("wandb")
            if wandb is not None and wandb.run is not None:
                wandb.finish()
            HydraConfig.instance().cfg = None
            GlobalHydra.instance().clear()
            torch.set_num_threads(threads)
            for signum, action in on_signal.items():
                signal.signal(signum, action)
            os.environ.clear()
            os.environ.update(environ)
            for handler in set(root.handlers) - handlers:
                if not type(handler).__module__.startswith("_pytest"):
                    root.removeHandler(handler)
                    handler.close()
            for logger, (level, kept) in loggers.items():
                if logger.level != level:  # each setLevel clears every logger's cache
                    logger.setLevel(level)
                logger.filters[:] = kept


def stopped(capsys: pytest.CaptureFixture, *overrides: str, encoders: bool = False) -> Stop:
    """The single run `run(*overrides)`, which must stop (`SystemExit`): its exit status and
    output."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        run(*overrides, encoders=encoders)
    out, err = capsys.readouterr()
    return Stop(stop.value.code, out, err)


class Stop(NamedTuple):
    """How a run stopped: its exit status, stdout and stderr (of a process or of `stopped`)."""

    code: int | str | None
    out: str
    err: str


def error_line(stop: Stop | subprocess.CompletedProcess) -> str:
    """The one `error:` line of a run stopped for bad input (exit 2, no traceback)."""
    if isinstance(stop, subprocess.CompletedProcess):
        stop = Stop(stop.returncode, stop.stdout, stop.stderr)
    assert stop.code == 2, stop.err[-2000:]
    assert "Traceback" not in stop.err + stop.out
    lines = [line for line in stop.err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, stop.err
    return lines[0]


def results(run_dir: Path) -> dict:
    return json.loads((Path(run_dir) / "results.json").read_text())
