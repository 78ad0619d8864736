"""Hydra callback: tags a multirun with an id and writes summary.csv / .md / .json when it ends."""

from __future__ import annotations

import json
import logging
import os
import uuid
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from gesturebench import status
from gesturebench.results import ERROR_FILE, RESULTS_FILE, write_summary
from gesturebench.stats.comparisons import write_comparisons

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


class SweepSummaryCallback(Callback):
    """Writes one row per job of the multirun (failed ones marked) into the sweep folder."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        os.environ["GESTUREBENCH_SWEEP_ID"] = uuid.uuid4().hex

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep_dir = Path(config.hydra.sweep.dir)
        sweep_id = os.environ.get("GESTUREBENCH_SWEEP_ID", "")
        if not sweep_dir.is_dir():
            return
        rows = collect_jobs(sweep_dir, sweep_id)
        if not rows:
            return
        table = write_summary(sweep_dir, rows)
        write_comparisons(sweep_dir, rows)
        log.info(
            "summary of %d jobs: %s\n%s",
            len(rows),
            sweep_dir / "summary.md",
            table.to_markdown(index=False),
        )
        if any(r["status"] != "ok" for r in rows):
            status.mark_failed()
