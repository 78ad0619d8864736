"""`task=prepare_beat2`: check a downloaded BEAT2 folder (`dataset.root`) and write
beat2_report.md and beat2_report.json into the run folder; with `task.download=true`, first fetch
the public dataset repository's language folder into `dataset.root` through `huggingface_hub`
(never the SMPL-X model, which has its own licence)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig

from gesturebench.data.beat2_check import check_beat2
from gesturebench.reporting.beat2_report import BEAT2_REPORT_MD, write_beat2_report
from gesturebench.runtime.errors import ConfigError, DataError
from gesturebench.runtime.stages import stage
from gesturebench.runtime.weights import Downloader, hub_downloader
from gesturebench.tasks.job import Job

log = logging.getLogger(__name__)

#: Files of the dataset repository that are never downloaded: the SMPL-X body model.
NOT_DOWNLOADED = ("*smplx_models/*", "*SMPLX_*", "*.pkl")


@dataclass
class PrepareBeat2Task:
    """`task=prepare_beat2` (conf/task/prepare_beat2.yaml): `download` the `repo_folder` of
    `repo_id` into `dataset.root` first (whose last folder must be named `repo_folder`); check
    audio too (`audio`)."""

    name: str = "prepare_beat2"
    download: bool = False
    repo_id: str = "H-Liu1997/BEAT2"
    repo_folder: str = "beat_english_v2.0.0"
    revision: str | None = None
    audio: bool = True

    def __call__(self, cfg: DictConfig, job: Job, downloader: Downloader | None = None) -> dict:
        return self.prepare(
            Path(str(cfg.dataset.root)).expanduser(),
            str(cfg.dataset.split),
            job.run_dir,
            downloader,
        )

    def prepare(self, root: Path, split: str, out: Path, downloader: Downloader | None) -> dict:
        """Download into `root` (with `download`), check its `split`, write the report into
        `out`; returns the report's document."""
        if self.download:
            self.fetch(root, downloader)
        with stage(f"checking the BEAT2 folder {root}", "every listed sequence is read once"):
            report = check_beat2(root, split, self.audio)
        markdown = write_beat2_report(out, report)
        log.info("BEAT2 report: %s\n%s", out / BEAT2_REPORT_MD, markdown)
        if report.unusable:
            report_file = out / BEAT2_REPORT_MD
            raise DataError(root, f"not usable: {report.unusable} (report: {report_file})")
        return report.document()

    def fetch(self, root: Path, downloader: Downloader | None) -> None:
        """Download `repo_folder` of the dataset repository into `root` (huggingface_hub's
        `snapshot_download`, or `downloader` with its signature); one line when it fails."""
        if root.name != self.repo_folder:
            raise ConfigError(
                f"dataset.root={root} must end in {self.repo_folder}/ (the repository's folder "
                "it is downloaded into), or set task.repo_folder"
            )
        url = f"https://huggingface.co/datasets/{self.repo_id}"
        downloader = downloader or hub_downloader()
        if downloader is None:
            raise ConfigError(f"task.download=true but HF_HUB_OFFLINE is set ({url})")
        try:
            with stage(f"downloading {self.repo_folder} of {url} into {root}", "task.download"):
                downloader(
                    repo_id=self.repo_id,
                    repo_type="dataset",
                    revision=self.revision,
                    allow_patterns=[f"{self.repo_folder}/*"],
                    ignore_patterns=list(NOT_DOWNLOADED),
                    local_dir=str(root.parent),
                )
        except Exception as exc:  # no network, unknown repository, interrupted transfer
            raise DataError(
                root, f"download of {url} failed ({type(exc).__name__}); download it by hand"
            ) from None
