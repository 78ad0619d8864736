"""What a study server needs to run (`ServerOptions`), and the resolved copy of it that
`task=study_server` writes into the study's folder (`CONFIG_FILE`), so that the restart entry
(`python -m gesturebench.study.server <folder>`) serves the same study without composing the
harness's config or importing the task layer.

The saved file uses the launch's own keys (`task.port`, `task.design.…`, `study_server.db_url`),
every value resolved (no interpolation, absolute paths), so the restart reads it alone and accepts
overrides in the same words as the launch.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

import yaml
from omegaconf import MISSING, DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from gesturebench.run.config import as_checkable, checkable_dataclass, from_checked
from gesturebench.runtime.atomic import write_atomic
from gesturebench.runtime.errors import DataError
from gesturebench.study.server.app import Study, create_app
from gesturebench.study.server.design import StudyDesign
from gesturebench.study.server.manifest import read_manifest
from gesturebench.study.server.store import Store, open_engine

log = logging.getLogger(__name__)

#: The resolved server config in a study's folder, read by the restart entry.
CONFIG_FILE = "server.yaml"


@dataclass
class ServerOptions:
    """The server's settings (`task.*` of `task=study_server`, docs/study_server.md)."""

    # task=render's manifest.csv (its files are checked against their SHA-256 unless verify=false)
    manifest: str = MISSING
    verify: bool = True
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
        """The study to serve: manifest read, database `url` opened, admin token and link secret
        from the environment."""
        stimuli = read_manifest(self.manifest, verify=self.verify)
        token = os.environ.get(self.admin_token_env) or None
        if token is None:
            log.warning("%s is not set: the experimenter pages are off", self.admin_token_env)
        secret = os.environ.get(self.link_secret_env) or None
        log.info("study database: %s; links %s", url, "signed" if secret else "not signed")
        return Study(stimuli, self.design, Store(open_engine(url)), token, secret)

    def serve(self, url: str) -> None:
        """Serve the study on the database `url` until stopped."""
        import uvicorn

        study = self.study_app(url)
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


@dataclass
class SavedDatabase:
    """`study_server.db_url` as the launch resolved it (its default made explicit)."""

    db_url: str = MISSING


@dataclass
class SavedConfig:
    """`CONFIG_FILE`'s layout: the launch's keys for the server's settings and database."""

    task: ServerOptions = field(default_factory=ServerOptions)
    study_server: SavedDatabase = field(default_factory=SavedDatabase)


def _writable(node: DictConfig) -> DictConfig:
    """`node` and every config in it writable: OmegaConf makes a frozen dataclass's node
    read-only, which would refuse the saved values and the overrides."""
    OmegaConf.set_readonly(node, False)
    for key in node:
        child = None if OmegaConf.is_missing(node, key) else node[key]
        if isinstance(child, DictConfig):
            _writable(child)
    return node


def resolved(options: ServerOptions) -> ServerOptions:
    """`options` alone (a subclass's extra fields dropped), its files as absolute paths."""
    design = options.design
    if design.ids_file:
        design = replace(design, ids_file=str(Path(design.ids_file).resolve()))
    values = {f.name: getattr(options, f.name) for f in fields(ServerOptions)}
    return ServerOptions(
        **{**values, "manifest": str(Path(options.manifest).resolve()), "design": design}
    )


def save_config(folder: Path, options: ServerOptions, url: str) -> Path:
    """Write `options` (resolved) and the database `url` to `folder`/`CONFIG_FILE`."""
    saved = OmegaConf.structured(as_checkable(SavedConfig(resolved(options), SavedDatabase(url))))
    header = (
        "# written by task=study_server: `python -m gesturebench.study.server <this folder>` "
        "serves the study with it\n"
    )
    path = folder / CONFIG_FILE
    write_atomic(path, header + OmegaConf.to_yaml(saved))
    return path


def load_config(folder: Path, overrides: list[str]) -> tuple[ServerOptions, str]:
    """The options and database URL of `folder`/`CONFIG_FILE` with the dotted `overrides`
    (`task.port=8001`) on top; `DataError` in one line for a missing or invalid file or override."""
    path = folder / CONFIG_FILE
    if not path.is_file():
        raise DataError(
            path, "not found: start the study once with `python launch.py task=study_server`"
        )
    try:
        merged = OmegaConf.merge(
            _writable(OmegaConf.structured(checkable_dataclass(SavedConfig))),
            OmegaConf.load(path),
            OmegaConf.from_dotlist(overrides),
        )
        saved = from_checked(SavedConfig, merged)
    except (OmegaConfBaseException, yaml.YAMLError, ValueError) as err:
        key = getattr(err, "full_key", None)
        raise DataError(path, (f"{key}: " if key else "") + str(err).splitlines()[0]) from None
    assert isinstance(saved, SavedConfig)
    return saved.task, saved.study_server.db_url
