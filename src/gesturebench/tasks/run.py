"""`Run`: what a task works with, built once at its top from the composed config (`Run.of`) and
handed down as objects and plain values: nothing below it receives the DictConfig.

A task's `__call__(cfg, job)` (the interface every task keeps) builds its `Run` first; the
functions below the task take the `Run` or its parts. What is cheap and cannot fail for another
task's reason is built at once (the dataset source, the stats, the logger factory, the protocol
pin read, the nodes of the model, metrics, body model and trainer as plain containers); what costs
time or may refuse the run is made on first use and kept (`device`, `protocol`, `context`, the
prepared metrics), so a task that uses it decides when it happens and it happens once, also for
`Run`s derived from this one with another model (`with_model`: `task=analyze`'s study sources).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from omegaconf import DictConfig, OmegaConf

from gesturebench.data.lengths import LengthPolicy
from gesturebench.metrics.base import GestureMetric
from gesturebench.metrics.context import MetricContext
from gesturebench.reporting.loggers import LoggerFactory
from gesturebench.run.config import PathsConfig, build, plain, resolved
from gesturebench.run.datamodule import Beat2Source
from gesturebench.run.protocol import Protocol, metric_nodes, protocol_check, read_pin
from gesturebench.stats.bootstrap import BootstrapOptions
from gesturebench.tasks.common import dataset_source, device_for, logger_factory, make_context
from gesturebench.tasks.job import Job

T = TypeVar("T")

#: a model's metric sets (one per sample) and the metrics of its samples together
MetricSets = tuple[list[dict[str, GestureMetric]], dict[str, GestureMetric]]


@dataclass(frozen=True)
class Run:
    """The run of one task: its `job` (run folder, choices, overrides, sweep id), its resolved
    `config` (what results record and hash), the `dataset` source, the `model`, `metrics`,
    `body_model`, `annotator`, `encoder` and `trainer` nodes (plain containers, interpolations
    resolved; `model` None where the task scores no configured model), the metrics preset's
    protocol `pin`, the `logger` factory (None: no logger), the `stats` options, `paths`, `seed`,
    `resume`, the length policy and gap, whether bars are shown (`progress`) and the study node
    (`study`, resolved: analyze, render and annotate read it)."""

    job: Job
    config: dict
    dataset: Beat2Source
    model: dict | None
    metrics: dict[str, dict]
    pin: Protocol | None
    body_model: dict
    annotator: dict
    encoder: dict
    trainer: dict
    logger: LoggerFactory | None
    stats: BootstrapOptions
    paths: PathsConfig
    seed: int
    resume: bool
    length_policy: LengthPolicy
    max_length_gap: float
    progress: bool
    study: dict
    #: what is made on first use (`_once`), shared with the Runs `with_model` derives
    made: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, cfg: DictConfig, job: Job, *, model: bool = True) -> Run:
        """The run of `cfg` in `job`; `model=False` for a task that scores no configured model
        (its node is then not resolved, so an unset mandatory model option does not stop it).
        A mandatory value left unset (`???`) in a node the run holds raises omegaconf's
        `MissingMandatoryValue` (the command line names the key)."""
        config = resolved(cfg)
        metrics = plain(cfg.metrics)  # the config goes no further than run/config
        return cls(
            job=job,
            config=config,
            dataset=dataset_source(
                plain(cfg.dataset), root_by_hand=not OmegaConf.is_interpolation(cfg.dataset, "root")
            ),
            model=plain(cfg.model) if model else None,
            metrics=metric_nodes(metrics),
            pin=read_pin(metrics),
            body_model=plain(cfg.body_model),
            annotator=plain(cfg.annotator),
            encoder=plain(cfg.encoder),
            trainer=plain(cfg.trainer),
            logger=logger_factory(None if cfg.logger is None else plain(cfg.logger)),
            stats=build(cfg.stats),
            paths=PathsConfig(**plain(cfg.paths)),
            seed=config["seed"],
            resume=config["resume"],
            length_policy=config["length_policy"],
            max_length_gap=config["max_length_gap"],
            progress=bool(config["trainer"].get("enable_progress_bar", True)),
            study=config["study"] if isinstance(config.get("study"), dict) else {},
        )

    def with_model(self, model: dict) -> Run:
        """This run scoring the model of node `model`, with no logger (`task=analyze`'s sources):
        the same dataset, device, context, protocol and prepared metrics (`made`, shared)."""
        return dataclasses.replace(self, model=model, logger=None)

    def checked(self) -> Run:
        """This run, its `device` and `protocol` made now: a GPU asked for where there is none, or
        a run off its preset's pinned split, refused before any work."""
        _ = (self.device, self.protocol)
        return self

    def _once(self, key: str, make: Callable[[], T]) -> T:
        if key not in self.made:
            self.made[key] = make()
        return self.made[key]

    @property
    def preset(self) -> str:
        """The metrics preset chosen (`metrics=`; "?" where the job chose none)."""
        return self.job.choice("metrics")

    @property
    def device(self) -> str:
        """This process's device for `trainer.accelerator` (`common.device_for`; a GPU asked for
        where there is none refused here, on first use)."""
        return self._once("device", lambda: device_for(str(self.trainer.get("accelerator"))))

    @property
    def protocol(self) -> dict | None:
        """The preset's pin checked against the dataset (`protocol_check`: refused here, on first
        use, where it differs under `strict`); what results.json records."""
        return self._once("protocol", lambda: protocol_check(self.pin, self.dataset, self.preset))

    @property
    def context(self) -> MetricContext:
        """The context models and metrics prepare from (`common.make_context`): the body model on
        this process's device, the dataset's cache and the encoders' folder; made on first use."""
        return self._once(
            "context",
            lambda: make_context(
                self.dataset, self.body_model, self.device, self.paths, self.job.overrides
            ),
        )

    def metric_sets(self, samples: int) -> MetricSets:
        """The metric sets of a model of `samples` samples, each metric built from its node and
        prepared with `context`, the first time; a later call (a study's next
        source) gets the same metric objects (their states are reset as an evaluation starts), with
        sets built for the samples the earlier calls had none for."""
        empty: MetricSets = ([], {})
        sets, across = self._once("metrics", lambda: empty)
        while len(sets) < samples:
            built = {name: build(node) for name, node in self.metrics.items() if name not in across}
            for metric in built.values():
                metric.prepare(self.context)
            across.update({n: m for n, m in built.items() if m.across_samples})
            sets.append({n: m for n, m in built.items() if not m.across_samples})
        return sets[:samples], across
