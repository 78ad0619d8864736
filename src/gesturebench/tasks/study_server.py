"""`task=study_server`: serve a perceptual study of `task=render`'s stimuli (docs/study_server.md).

The study's folder is `outputs/study_server/<task.study>/` under `paths.root`: it holds the default
database (the SQLite file study.db, unless `study_server.db_url` names another) and the resolved
server config `server.yaml`, written at each start, that the restart entry
`python -m gesturebench.study.server <folder>` reads. Restarting either way with the same
`task.study` continues the same study. The experimenter pages need the token in the environment
variable `task.admin_token_env`; links are signed when the environment variable
`task.link_secret_env` holds the study's secret.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig

from gesturebench.study.server.serve import ServerOptions, save_config
from gesturebench.tasks.job import Job

log = logging.getLogger(__name__)


def study_folder(root: str, study: str) -> Path:
    """The folder of `study` (`task.study`) under `root` (`paths.root`; created)."""
    folder = Path(root).resolve() / "outputs" / "study_server" / study
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def database_url(db_url: str | None, root: str, study: str) -> str:
    """`db_url` (`study_server.db_url`), or the SQLite file study.db in the folder of `study`."""
    return db_url or f"sqlite:///{study_folder(root, study) / 'study.db'}"


@dataclass
class StudyServerTask(ServerOptions):
    """`task=study_server` (conf/task/study_server.yaml): the server's options and the study's
    name."""

    name: str = "study_server"
    study: str = "study"

    def __call__(self, cfg: DictConfig, job: Job) -> dict:
        folder = study_folder(cfg.paths.root, self.study)
        url = database_url(cfg.study_server.db_url, cfg.paths.root, self.study)
        save_config(folder, self, url)
        log.info(
            "study folder: %s (restart: python -m gesturebench.study.server %s)", folder, folder
        )
        self.serve(url)
        return {"task": "study_server", "study": self.study, "folder": str(folder)}
