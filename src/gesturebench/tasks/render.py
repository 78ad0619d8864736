"""`task=render`: the study's stimuli (`study.stimuli`). Every source of `study.sources` on every
study window (`study.windows`: selected, or `study.windows.file` for a given list of sequences and
windows), rendered with `task.camera` once muted and once with the window's speech, into
<run>/<task.folder>/<condition>/<stimulus_id>.mp4, plus `manifest.csv` for a rating tool and
`windows.csv`, the windows rendered.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from gesturebench.models.base import GestureModel
from gesturebench.models.cache import MotionCache
from gesturebench.render.clips import Camera
from gesturebench.run.config import build_model
from gesturebench.runtime.errors import ConfigError
from gesturebench.study.schema import CONDITIONS, Condition
from gesturebench.study.sources import source_model
from gesturebench.study.stimuli import StimulusRenderer, write_stimuli
from gesturebench.study.window_records import window_records
from gesturebench.study.windows import configured_windows, window_plan, windows_csv
from gesturebench.tasks.job import Job
from gesturebench.tasks.run import Run

log = logging.getLogger(__name__)


@dataclass
class RenderTask:
    """`task=render` (conf/task/render.yaml): `sources` (names in `study.sources`; empty: all),
    `conditions` (muted and/or audio), `camera`, and the stimuli `folder` in the run folder."""

    name: str = "render"
    sources: list[str] = field(default_factory=list)
    conditions: list[Condition] = field(default_factory=lambda: list(CONDITIONS))
    camera: Camera = field(default_factory=lambda: Camera(size=512, style="mesh"))
    folder: str = "stimuli"

    def __call__(self, cfg: DictConfig, job: Job) -> dict:
        return render_stimuli(Run.of(cfg, job, model=False), self, job.run_dir)


def chosen_sources(known: list[str], names: list[str]) -> list[str]:
    """`names` checked against `known` (`study.sources`; empty `names`: every source, in the study's
    order)."""
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(
            f"task.sources: {', '.join(unknown)} not in study.sources ({', '.join(known)})"
        )
    return list(names) or known


def render_stimuli(run: Run, task: RenderTask, out: Path) -> dict:
    """The task: its objects built from `run` (the study: `run.study`), then handed to
    `study.stimuli.write_stimuli`, which renders every (source, window, condition) and writes the
    manifest into `out`; returns a summary."""
    if not task.conditions:
        raise ConfigError(f"task.conditions is empty: name one or more of {list(CONDITIONS)}")
    study = run.study
    sources = chosen_sources(list(study["sources"]), list(task.sources))
    nodes = {name: source_model(name, study["sources"][name]) for name in sources}
    source = run.dataset
    plan = window_plan(study["windows"])
    splits = source.splits(plan.splits)
    windows = configured_windows(plan, splits)
    windows_table = windows_csv(windows)
    records = window_records(plan, splits, windows)
    context = run.context
    cache = MotionCache(context.cache_dir / "generated")

    def prepared(node: Any) -> GestureModel:
        model = build_model(node)
        model.prepare(context)
        return model

    # one source's model at a time: each is built and prepared when its turn comes
    models = ((name, prepared(node)) for name, node in nodes.items())
    folder = out / task.folder
    log.info(
        "rendering %d source(s) × %d window(s) × %s at %d px (%s) into %s",
        len(sources),
        len(windows),
        "/".join(task.conditions),
        task.camera.size,
        task.camera.style,
        folder,
    )
    renderer = StimulusRenderer(
        context.body_model, cache, task.camera, task.conditions, folder, source.root
    )
    return write_stimuli(models, windows, windows_table, records, renderer)
