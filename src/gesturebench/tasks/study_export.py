"""`task=study_export`: the collected answers of a study as the analysis reads them, and the
experimenter's progress tables, into the run folder.

Writes ratings.csv (rating mode, the file of `task=analyze study=csv study.path=…`) and/or
pairwise.csv (pairwise mode, for `task=analyze study=pairwise study.path=…`),
progress_participants.csv and, with `task.manifest`, progress_stimuli.csv (how many participants
rated each stimulus).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig

from gesturebench.runtime.atomic import write_atomic
from gesturebench.study.pairwise import pairwise_csv
from gesturebench.study.ratings import ratings_csv
from gesturebench.study.server.export import pairwise_table, progress_tables, ratings_table
from gesturebench.study.server.manifest import read_manifest
from gesturebench.study.server.store import Store, open_engine
from gesturebench.tasks.job import Job
from gesturebench.tasks.study_server import database_url

log = logging.getLogger(__name__)


@dataclass
class StudyExportTask:
    """`task=study_export` (conf/task/study_export.yaml)."""

    name: str = "study_export"
    # the study whose default database is read (unless `study_server.db_url` is set)
    study: str = "study"
    # the manifest served (optional): per-stimulus counts in progress_stimuli.csv
    manifest: str | None = None
    exclude_at: int = 2

    def __call__(self, cfg: DictConfig, job: Job) -> dict:
        store = Store(
            open_engine(database_url(cfg.study_server.db_url, cfg.paths.root, self.study))
        )
        return self.export(store, job.run_dir)

    def export(self, store: Store, out: Path) -> dict:
        """The tables of `store` into `out`; returns the files written."""
        files = {}
        ratings, pairs = ratings_table(store), pairwise_table(store)
        if len(ratings):
            files["ratings"] = out / "ratings.csv"
            write_atomic(files["ratings"], ratings_csv(ratings))
        if len(pairs):
            files["pairwise"] = out / "pairwise.csv"
            write_atomic(files["pairwise"], pairwise_csv(pairs))
        stimuli = read_manifest(self.manifest, verify=False) if self.manifest else {}
        progress = progress_tables(store, stimuli, self.exclude_at)
        people = progress["participants"]
        files["progress_participants"] = out / "progress_participants.csv"
        write_atomic(files["progress_participants"], people.to_csv(index=False))
        if stimuli:
            files["progress_stimuli"] = out / "progress_stimuli.csv"
            write_atomic(files["progress_stimuli"], progress["stimuli"].to_csv(index=False))
        log.info(
            "%d participants (%d complete, %d excluded so far), %d ratings, %d comparisons",
            len(people),
            int(people["complete"].sum()),
            int(people["excluded"].sum()),
            int((ratings["dimension"] != "attention").sum()),
            int((pairs["dimension"] != "attention").sum()),
        )
        for name, path in files.items():
            log.info("%s: %s", name, path)
        return {"task": "study_export", "files": {k: str(v) for k, v in files.items()}}
