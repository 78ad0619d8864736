"""`task=evaluate`: score `model` on the dataset's split with `metrics`; commit results.json,
per_sequence.csv and the clips into the run folder together."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import pytorch_lightning as pl
import torch
from omegaconf import DictConfig

from gesturebench.annotation.clip import window_audio
from gesturebench.models.cache import MotionCache
from gesturebench.models.prescan import prescan
from gesturebench.render.clips import Camera, motion_frames, write_clip
from gesturebench.render.layout import side_by_side
from gesturebench.reporting.headline import headline_table
from gesturebench.reporting.loggers import log_results, logged
from gesturebench.reporting.report import write_run_report
from gesturebench.reporting.results import (
    PER_SEQUENCE_FILE,
    RESULTS_FILE,
    build_results,
    config_hash,
    load_complete,
    stage_results,
)
from gesturebench.run.config import build, build_model
from gesturebench.run.datamodule import GestureDataModule
from gesturebench.run.evaluator import Evaluator
from gesturebench.runtime.commit import staged
from gesturebench.tasks.common import claim_run_dir
from gesturebench.tasks.fetch import AssetScope, check_assets
from gesturebench.tasks.job import Job
from gesturebench.tasks.run import Run

log = logging.getLogger(__name__)


@dataclass
class EvaluateTask:
    """`task=evaluate` (conf/task/evaluate.yaml): `render_clips` clips logged per run (0: none),
    each the first `render_seconds` of one sequence, reference | generated side by side with the
    audio, seen by `camera`."""

    name: str = "evaluate"
    render_clips: int = 1
    render_seconds: float = 4.0
    camera: Camera = field(default_factory=lambda: Camera(style="mesh"))

    def __call__(self, cfg: DictConfig, job: Job) -> dict:
        """The task, in `job`'s run folder, on its `Run` built here once: refused before any data
        is prepared where the GPU asked for is missing, the run is off its preset's pinned split
        or its folder holds another configuration's results (`claim_run_dir`), or where public
        files it needs are missing (`fetch.check_assets`: all named in one line); skipped where
        the run folder holds its complete results."""
        run = Run.of(cfg, job).checked()
        check_assets(AssetScope.of(cfg), job.overrides)  # every missing public file named at once
        out = job.run_dir
        chash = config_hash(run.config)
        claim_run_dir(out, run.config, chash)
        if run.resume and (done := load_complete(out, chash)):
            log.info(
                "%s already holds complete results for this config: skipped (resume=true)",
                out / RESULTS_FILE,
            )
            _mark_sweep(out, done, job.sweep_id)
            return done
        return score(run, run.dataset.open(), out, run.config, chash, self)


#: what an evaluation inside another task renders: no clips
NO_CLIPS = EvaluateTask(render_clips=0)


def score(
    run: Run,
    dataset,
    out: Path,
    config: dict,
    chash: str,
    task: EvaluateTask = NO_CLIPS,
) -> dict:
    """Evaluate `run.model` on `dataset` (any sequence of SequenceRecords, e.g. study windows) into
    `out`, recording `config` (resolved, hash `chash`), the run's metrics preset, protocol and
    sweep; logged with `run.logger`; clips as `task` says. The run's device, protocol, context and
    prepared metrics are made once per run (the first call), the model and the evaluation here,
    in the order their seeds expect; `test` runs it.

    Returns the results.json document on global rank 0 and `{}` on the other ranks.
    """
    assert run.model is not None, "a Run built with model=False scores no model"
    protocol = run.protocol  # refused before any work
    pl.seed_everything(run.seed, workers=True)
    # Scores must not depend on the device (docs/metrics.md): no TF32 in cuDNN convolutions (the
    # encoders) or matmuls.
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    context = run.context
    model = build_model(run.model)
    model.prepare(context)
    max_gap = run.max_length_gap + model.length_shortfall
    prescan(model, dataset, run.length_policy, max_gap)
    metric_sets, across = run.metric_sets(model.samples)
    evaluator = Evaluator(
        model,
        context.body_model,
        metric_sets,
        MotionCache(context.cache_dir / "generated"),
        run.length_policy,
        max_gap,
        needs_vertices=any(m.needs_vertices for m in metric_sets[0].values()),
        stats=run.stats,
        across_samples=across,
    )
    source = run.dataset
    datamodule = GestureDataModule(dataset, source.num_workers)
    tags = (f"model:{model.name}", f"dataset:{source.name}", f"preset:{run.preset}")
    name = f"{model.name}-{source.name}"
    with logged(run.logger, out, name, config, tags, run.job.sweep_id) as logger:
        trainer = build(
            run.trainer,
            logger=logger or False,
            use_distributed_sampler=False,
            enable_checkpointing=False,
            enable_model_summary=False,
            default_root_dir=str(out),
        )
        trainer.test(evaluator, datamodule=datamodule, verbose=False)
        if not trainer.is_global_zero:
            return {}
        assert evaluator.results is not None  # set at the end of every test epoch
        results = build_results(
            config,
            chash,
            source.name,
            run.preset,
            run.job.sweep_id,
            dataset,
            model,
            {**metric_sets[0], **across},
            evaluator.results,
            protocol,
        )
        return write_outputs(results, task, dataset, model, evaluator, logger, out)


def write_outputs(
    results: dict, task: EvaluateTask, dataset, model, evaluator: Evaluator, logger, out: Path
) -> dict:
    """results.json, per_sequence.csv, the clips `task` asks for and report.html (its page to
    look at), committed into `out` together
    (`runtime.commit.staged`: a kill leaves the previous ones), all logged to `logger`, the
    headline table printed; returns `results`."""
    with staged(out) as stage:
        stage_results(stage, results)
        clips = [
            out / p.relative_to(stage) for p in render_clips(task, dataset, model, evaluator, stage)
        ]
        write_run_report(out, results, into=stage)
    log_results(logger, results, clips, (out / RESULTS_FILE, out / PER_SEQUENCE_FILE))
    print(headline_table(results), flush=True)
    log.info("results: %s", out / RESULTS_FILE)
    return results


def render_clips(task: EvaluateTask, dataset, model, evaluator: Evaluator, out: Path) -> list[Path]:
    """`task.render_clips` clips of the first sequences, each its first `task.render_seconds`:
    reference | generated (labelled), with the sequence's audio, into `out`/clips/."""
    n = min(task.render_clips, len(dataset))
    if n <= 0:
        return []
    camera = task.camera
    log.info("rendering %d clip(s) (%s)", n, camera.style)
    paths = []
    for record in (dataset[i] for i in range(n)):
        generated = evaluator.cache.get(model, record)
        frames = int(task.render_seconds * record.motion.fps)
        panels = [
            motion_frames(evaluator.body_model, motion.frames(0, frames), camera)
            for motion in (record.motion, generated)
        ]
        clip = side_by_side(panels, ["reference", f"generated: {model.name}"])
        audio = window_audio(record.audio, 0, len(clip), record.motion.fps)
        path = out / "clips" / f"{record.id}.mp4"
        paths.append(write_clip(path, clip, record.motion.fps, audio))
    return paths


def _mark_sweep(out, results: dict, sweep: str | None) -> None:
    """A resumed job joins the summary of its multirun `sweep` (its results.json recommitted, the
    other files kept)."""
    if sweep and results.get("sweep_id") != sweep:
        results["sweep_id"] = sweep
        with staged(out, carry=True) as stage:
            stage_results(stage, results, per_sequence=False)
