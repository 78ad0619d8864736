"""Hydra callback (`conf/config.yaml`'s `hydra.callbacks.summary`): tags a multirun with an id
(GESTUREBENCH_SWEEP_ID, the W&B group of its jobs) and, when it ends, writes the sweep's summary
(`reporting/summary.py`); with W&B, its tables are also logged to a run of the sweep's group."""

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
from gesturebench.tasks.common import logger_factory


class SweepSummaryCallback(Callback):
    """Writes one row per job of the multirun (failed ones marked) into the sweep folder."""

    #: when the multirun started (its summary folder's name), set by `on_multirun_start`
    started = "sweep"

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        os.environ["GESTUREBENCH_SWEEP_ID"] = uuid.uuid4().hex
        self.started = time.strftime("%Y-%m-%d_%H-%M-%S")

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep_id = os.environ.get("GESTUREBENCH_SWEEP_ID", "")
        written = write_sweep_summary(Path(config.hydra.sweep.dir), sweep_id, self.started)
        if written is not None:
            own, tables = written
            factory = logger_factory(config.get("logger"))
            log_sweep_tables(factory, own, f"sweep-{sweep_id[:8]}", tables)
