"""Hydra callback (`conf/config.yaml`'s `hydra.callbacks.summary`): tags a multirun with an id (the
W&B group of its jobs, passed to them in the environment: `tasks.job.SWEEP_ID_VARIABLE`) and,
when it ends, writes the sweep's summary (`reporting/summary.py`), marks the launch failed where a
job failed, and with W&B logs its tables to a run of the sweep's group."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from gesturebench.reporting.loggers import log_sweep_tables
from gesturebench.reporting.summary import write_sweep_summary
from gesturebench.run.config import report_options
from gesturebench.runtime import status
from gesturebench.tasks.common import logger_factory
from gesturebench.tasks.job import SWEEP_ID_VARIABLE


class SweepSummaryCallback(Callback):
    """Writes one row per job of the multirun (failed ones marked) into the sweep folder."""

    #: the multirun's id and when it started (its summary folder's name), set by
    #: `on_multirun_start`
    sweep_id = ""
    started = "sweep"

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        self.sweep_id = uuid.uuid4().hex
        self.started = time.strftime("%Y-%m-%d_%H-%M-%S")
        os.environ[SWEEP_ID_VARIABLE] = self.sweep_id

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        os.environ.pop(SWEEP_ID_VARIABLE, None)
        summary = write_sweep_summary(
            Path(config.hydra.sweep.dir),
            self.sweep_id,
            self.started,
            report_options(config).latex.interval,
        )
        if summary is None:
            return
        if summary.failed:
            status.current().mark_failed()
        factory = logger_factory(config.get("logger"))
        log_sweep_tables(factory, summary.folder, self.sweep_id, summary.tables)
