"""Hydra callback: tags a multirun with an id and, when it ends, writes summary.csv / .md / .json
(and comparisons.csv / .md where it scored several models on the same sequences) into the sweep's
own folder `sweeps/<start time>_<id>/` (kept) and, as the latest, beside the job folders (the sweep
folder itself stays deterministic, so that rerunning a sweep resumes it); with W&B, the tables are
also logged to a run of the sweep's group (`loggers.log_sweep_tables`)."""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from gesturebench.reporting.comparability import mixed_conventions
from gesturebench.reporting.comparisons import write_comparisons
from gesturebench.reporting.loggers import log_sweep_tables
from gesturebench.reporting.results import ERROR_FILE, RESULTS_FILE
from gesturebench.reporting.sweep_plots import write_sweep_plots
from gesturebench.reporting.tables import write_summary
from gesturebench.runtime import status
from gesturebench.runtime.atomic import write_atomic

log = logging.getLogger(__name__)


def collect_jobs(sweep_dir: Path, sweep_id: str) -> list[dict]:
    """Rows of the jobs of this multirun: complete results.json or error.json tagged with
    `sweep_id`."""
    rows = []
    for job_dir in sorted(p for p in sweep_dir.iterdir() if p.is_dir()):
        for name, state in ((ERROR_FILE, "failed"), (RESULTS_FILE, "ok")):
            try:
                doc = json.loads((job_dir / name).read_text())
            except (OSError, ValueError):
                continue
            if doc.get("sweep_id") == sweep_id:
                rows.append({"job": job_dir.name, "status": state, **doc})
                break
    return rows


def log_tables(config: DictConfig, own: Path, sweep_id: str, names: list[str]) -> None:
    """The sweep's CSV tables (summary, comparisons) to its logger: with W&B, as tables of a run
    `sweep-<id>` in the sweep's own folder `own`, grouped with the sweep's jobs."""
    tables = {Path(name).stem: own / name for name in names if name.endswith(".csv")}
    log_sweep_tables(config.get("logger"), own, f"sweep-{sweep_id[:8]}", tables)


class SweepSummaryCallback(Callback):
    """Writes one row per job of the multirun (failed ones marked) into the sweep folder."""

    #: when the multirun started (its summary folder's name), set by `on_multirun_start`
    started = "sweep"

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        os.environ["GESTUREBENCH_SWEEP_ID"] = uuid.uuid4().hex
        self.started = time.strftime("%Y-%m-%d_%H-%M-%S")

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep_dir = Path(config.hydra.sweep.dir)
        sweep_id = os.environ.get("GESTUREBENCH_SWEEP_ID", "")
        if not sweep_dir.is_dir():
            return
        rows = collect_jobs(sweep_dir, sweep_id)
        if not rows:
            return
        own = sweep_dir / "sweeps" / f"{self.started}_{sweep_id[:8]}"
        for warning in mixed_conventions(rows).warnings:
            log.warning("summary: %s", warning)
        write_summary(own, rows, f"Sweep {sweep_id[:8]} of {sweep_dir}")
        write_sweep_plots(rows, own)
        names = ["summary.csv", "summary.md", "summary.json"]
        if write_comparisons(own, rows) is not None:
            names += ["comparisons.csv", "comparisons.md"]
        for name in names:
            write_atomic(sweep_dir / name, (own / name).read_text())
        log_tables(config, own, sweep_id, names)
        log.info(
            "summary of %d jobs: %s (the latest also in %s)\n%s",
            len(rows),
            own / "summary.md",
            sweep_dir,
            (own / "summary.md").read_text(),
        )
        if any(r["status"] != "ok" for r in rows):
            status.mark_failed()
