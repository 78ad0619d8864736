"""`task=study_server`: serve a perceptual study of `task=render`'s stimuli (docs/study_server.md).

The database is `study_server.db_url` (any SQLAlchemy URL) or, by default, the SQLite file study.db
in the study's folder `outputs/study_server/<task.study>/`, the run folder: restarting the task with
the same `task.study` continues the same study. The experimenter pages need the token in the
environment variable `task.admin_token_env`; links are signed when the environment variable
`task.link_secret_env` holds the study's secret.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from omegaconf import MISSING, DictConfig

from gesturebench.study.server.app import Study, create_app
from gesturebench.study.server.design import StudyDesign
from gesturebench.study.server.manifest import read_manifest
from gesturebench.study.server.store import Store, open_engine

log = logging.getLogger(__name__)


def database_url(db_url: str | None, root: str, study: str) -> str:
    """`db_url` (`study_server.db_url`), or the SQLite file study.db in the folder of `study`
    (study_server's run folder under `root`, `paths.root`; created)."""
    if db_url:
        return db_url
    folder = Path(root).resolve() / "outputs" / "study_server" / study
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'study.db'}"


@dataclass
class StudyServerTask:
    """`task=study_server` (conf/task/study_server.yaml)."""

    name: str = "study_server"
    # task=render's manifest.csv (its files are checked against their SHA-256 unless verify=false)
    manifest: str = MISSING
    verify: bool = True
    study: str = "study"
    host: str = "127.0.0.1"
    port: int = 8000
    # seconds an idle connection stays open: longer than a clip plus its questions, so that a
    # browser's next request does not race the server closing the connection
    keep_alive: int = 75
    admin_token_env: str = "GESTUREBENCH_STUDY_TOKEN"
    # set (in the environment): participant links must carry `sig` = HMAC of the id with it
    link_secret_env: str = "GESTUREBENCH_STUDY_LINK_SECRET"
    design: StudyDesign = field(default_factory=StudyDesign)

    def study_app(self, url: str) -> Study:
        """The study to serve: manifest read, database `url` opened, admin token from the
        environment."""
        stimuli = read_manifest(self.manifest, verify=self.verify)
        token = os.environ.get(self.admin_token_env) or None
        if token is None:
            log.warning("%s is not set: the experimenter pages are off", self.admin_token_env)
        secret = os.environ.get(self.link_secret_env) or None
        log.info("study database: %s; links %s", url, "signed" if secret else "not signed")
        return Study(stimuli, self.design, Store(open_engine(url)), token, secret)

    def __call__(self, cfg: DictConfig) -> dict:
        import uvicorn

        study = self.study_app(database_url(cfg.study_server.db_url, cfg.paths.root, self.study))
        log.info(
            "serving %d stimuli (%s mode) at http://%s:%d/?%s=<id>",
            len(study.stimuli),
            self.design.mode,
            self.host,
            self.port,
            self.design.id_parameter,
        )
        uvicorn.run(
            create_app(study),
            host=self.host,
            port=self.port,
            timeout_keep_alive=self.keep_alive,
            log_level="warning",
        )
        return {"task": "study_server", "study": self.study}
