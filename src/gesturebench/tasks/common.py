"""What several tasks build from their config pieces (plain containers and values, never the
DictConfig: `tasks.run.Run` hands them down): the run folder (claimed for one configuration), the
dataset, the device, the body model, the run context."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from gesturebench.body.model import BodyModel
from gesturebench.data.records import SequenceRecord
from gesturebench.metrics.context import MetricContext
from gesturebench.reporting.loggers import LoggerFactory
from gesturebench.reporting.results import RESULTS_FILE, config_differences
from gesturebench.run.config import PathsConfig, build
from gesturebench.run.datamodule import Beat2Source
from gesturebench.runtime.commit import recover
from gesturebench.runtime.errors import ConfigError, DataError


def claim_run_dir(out: Path, config: dict, chash: str) -> None:
    """Make run folder `out` this configuration's (`config`, hash `chash`) before any work: finish
    or discard a commit a kill interrupted there (`runtime.commit.recover`), then refuse the folder
    where it holds the results of another configuration (a `hydra.run.dir=` or a sweep's job
    folder used before by other settings): a `ConfigError` naming both, never an overwrite. The same
    configuration's results are resumed or, with resume=false, replaced."""
    recover(out)
    try:
        held = json.loads((out / RESULTS_FILE).read_text())
    except (OSError, ValueError):
        return
    if not isinstance(held, dict) or held.get("config_hash") == chash:
        return
    theirs = str(held.get("config_hash"))[:8]
    there, here = config_differences(held.get("config") or {}, config)
    raise ConfigError(
        f"{out} holds the results of another configuration ({there}{', ' if there else ''}config"
        f" {theirs}; this run: {here}{', ' if here else ''}config {chash[:8]}): give this run its"
        " own folder (another hydra.run.dir= or hydra.sweep.dir=), or resume that run with its"
        " own configuration"
    )


def dataset_source(node: Any, root_by_hand: bool = False) -> Beat2Source:
    """The dataset configured by `node` (`cfg.dataset`'s plain containers), its root checked.

    A generated dataset (mini_beat2) is generated on first use only into its default folder (`root`
    left to its `${paths.data}/...` default): a `dataset.root=` set by hand (`root_by_hand`:
    `Run.of` tells it from the config) that does not exist is more likely a typo than a wish for
    a new dataset there, so it is a `DataError` naming `task=make_data`, the command that
    generates one at a chosen root."""
    source: Beat2Source = build(node)
    root = Path(source.root)
    if source.generate and not root.exists() and root_by_hand:
        raise DataError(
            root,
            f"dataset.root does not exist. {source.name} is generated on first use only into its"
            " default folder (paths.data); check dataset.root for a typo, or generate one here"
            f" with `python launch.py task=make_data dataset={source.name} dataset.root={root}`",
        )
    return source


def open_dataset(
    node: Any, split: str | None = None, load_audio: bool | None = None
) -> Sequence[SequenceRecord]:
    """The records of `split` of the dataset configured by `node` (`dataset_source`)."""
    return dataset_source(node).open(split, load_audio)


def device_for(accelerator: str) -> str:
    """This process's device for `trainer.accelerator`: its own GPU (`LOCAL_RANK` under DDP) with a
    GPU accelerator, else the CPU.

    Models, encoders and statistics are prepared before Lightning moves the Evaluator, so they must
    already be on the rank's GPU: a bare "cuda" would put every rank's on GPU 0. A GPU asked for
    where CUDA sees none is a `ConfigError` now, before any data or encoder is prepared (Lightning
    would refuse it later, with a traceback)."""
    if accelerator not in ("gpu", "cuda"):
        return "cpu"
    if not torch.cuda.is_available():
        raise ConfigError(
            f"trainer.accelerator={accelerator}: no CUDA GPU is visible on this"
            " machine (torch.cuda.is_available() is False); use trainer=cpu"
        )
    return f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}"


def logger_factory(node: Any) -> LoggerFactory | None:
    """The logger of `node` (`cfg.logger`'s plain containers; None: no logger) as a factory of
    runs: the class with its configured options bound; each run gives it its folder and name
    (`loggers.logged`)."""
    return None if node is None else build(node, _partial_=True)


def make_body_model(node: Any, device: str) -> BodyModel:
    """The body model of `node` (`cfg.body_model`'s plain containers) on `device`."""
    return build(node, device=device)


def dataset_cache_dir(source: Beat2Source, cache: str | Path) -> Path:
    """Cache folder of this dataset under `cache` (`paths.cache`): name + a hash of its root, so two
    copies never share statistics."""
    root_hash = hashlib.sha256(str(Path(str(source.root)).resolve()).encode()).hexdigest()[:8]
    return Path(cache) / f"{source.name}-{root_hash}"


def make_context(
    source: Beat2Source,
    body_model: Any,
    device: str,
    paths: PathsConfig,
    overrides: tuple[str, ...] = (),
) -> MetricContext:
    """The context models and metrics `prepare` from: the body model of node `body_model` on
    `device` (`device_for`), the dataset's cache under `paths.cache` and the encoders under
    `paths.checkpoints`; mini_beat2 (generated data) may auto-train encoders; a missing one is
    named with the command that creates it, with the job's command-line `overrides`."""
    return MetricContext(
        dataset_name=source.name,
        split=lambda name: source.open(split=name, load_audio=False),
        cache_dir=dataset_cache_dir(source, paths.cache),
        checkpoints_dir=Path(paths.checkpoints),
        body_model=make_body_model(body_model, device),
        device=device,
        auto_train=bool(source.generate),
        overrides=overrides,
    )
