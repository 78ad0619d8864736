"""`task=leaderboard`: collect the latest complete result per (dataset, model, preset, config hash)
across runs into leaderboard.md, leaderboard.csv and leaderboard.tex."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from omegaconf import DictConfig

from gesturebench.reporting.latex import write_latex_leaderboard
from gesturebench.reporting.leaderboard import LEADERBOARD_MD, collect, write_leaderboard
from gesturebench.run.config import report_options
from gesturebench.tasks.job import Job

log = logging.getLogger(__name__)


@dataclass
class LeaderboardTask:
    """`task=leaderboard` (conf/task/leaderboard.yaml): the run folders searched (`roots`) and
    where the two files go (`out_dir`)."""

    name: str = "leaderboard"
    roots: list[str] = field(default_factory=lambda: ["outputs", "multirun"])
    out_dir: str = "outputs/leaderboard"

    def __call__(self, cfg: DictConfig, job: Job) -> dict:
        interval = report_options(cfg).latex.interval
        rows = collect(list(self.roots))
        out = Path(self.out_dir)
        write_leaderboard(out, rows)
        latex = write_latex_leaderboard(out, rows, interval)
        log.info(
            "leaderboard of %d results from %s: %s",
            len(rows),
            ", ".join(self.roots),
            out / LEADERBOARD_MD,
        )
        print((out / LEADERBOARD_MD).read_text(), flush=True)
        return {"results": len(rows), "markdown": str(out / LEADERBOARD_MD), "latex": str(latex)}
