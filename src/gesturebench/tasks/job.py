"""The job a task runs in (`Job`), read once where it starts (the command line) and handed to the
task: kept apart from `tasks.common` so that a light task (the study server's) imports no torch."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

#: the environment variable that carries a multirun's id from its launcher to its jobs (a worker
#: process of the joblib or submitit launcher inherits it); only the command line reads it
SWEEP_ID_VARIABLE = "GESTUREBENCH_SWEEP_ID"


@dataclass(frozen=True)
class Job:
    """What a task knows of the Hydra job it runs in, read once where the job starts (the command
    line) and handed down as values: its run folder, its config-group choices, its command-line
    overrides and its multirun's id (None outside a multirun). The default: a job outside Hydra
    (the working folder, no choice, no override)."""

    run_dir: Path = field(default_factory=Path.cwd)
    choices: Mapping[str, str] = field(default_factory=dict)
    overrides: tuple[str, ...] = ()
    sweep_id: str | None = None

    @classmethod
    def of_hydra(cls, sweep_id: str | None = None) -> Job:
        """This process's Hydra job, of multirun `sweep_id`."""
        if not HydraConfig.initialized():
            return cls(sweep_id=sweep_id)
        hydra = HydraConfig.get()
        out = OmegaConf.select(cast(DictConfig, hydra), "runtime.output_dir")  # unset under --cfg
        return cls(
            Path(out) if out else Path.cwd(),
            {group: str(option) for group, option in hydra.runtime.choices.items() if option},
            tuple(hydra.overrides.task),
            sweep_id,
        )

    def choice(self, group: str) -> str:
        """The option chosen for config group `group` ("?" where the job chose none)."""
        return self.choices.get(group, "?")
