"""`Evaluator`: the LightningModule that scores one motion source on one split with a set of
metrics.

Per sequence (`test_step`): generated motion (cached), the length policy, one SMPL-X forward per
motion shared by all metrics (one in all when the generated motion is the reference's), one
`MotionPair`, annotated by the metrics that annotate (`metrics.base.annotated`), then to every
metric's `update`. At epoch end every process computes (metric states are reduced across
processes) and rank 0 keeps the results, with each scored value's bootstrap interval
(docs/statistics.md) from the reduced states.

With ``model.samples`` K > 1 (docs/statistics.md, "Several samples per input") each sequence is
generated K times, sample k drawing from ``model.seed + k``, and scored by the k-th of K alike
metric sets; a value is the mean of its K sample values, its interval that of the mean of their
replicates on the same resamples, and the metrics of the K samples together (`across_samples`, e.g.
div_sample), built once, see each sequence's K samples.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Collection
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytorch_lightning as pl
import torch
from torchmetrics import Metric

from gesturebench.body.output import BodyOutput
from gesturebench.data.lengths import LengthPolicy, align_lengths
from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.metrics.base import GestureMetric, annotated, cat_state
from gesturebench.metrics.caveats import degenerate_caveats, is_motionless
from gesturebench.metrics.pair import MotionPair
from gesturebench.models.base import GestureModel
from gesturebench.models.cache import MotionCache
from gesturebench.runtime.memory import release_freed_memory
from gesturebench.stats.bootstrap import BootstrapOptions, Resamples, percentile_interval


class FrameLog(Metric):
    """Per-sequence frame counts (evaluated, dropped by the length policy) and whether the
    generated motion is motionless (`caveats`), gathered across processes."""

    full_state_update = False
    rows: list[torch.Tensor]

    def __init__(self) -> None:
        super().__init__()
        self.add_state("rows", default=[], dist_reduce_fx="cat")

    def update(self, index: int, n_frames: int, dropped: int, motionless: bool) -> None:
        row = [index, n_frames, dropped, int(motionless)]
        self.rows.append(torch.tensor([row], dtype=torch.int64, device=self.device))

    def compute(self) -> dict[int, dict[str, int]]:
        rows = cat_state(self.rows)
        if rows is None:
            return {}
        return {
            int(i): {"frames": int(n), "dropped_frames": int(d), "motionless": int(s)}
            for i, n, d, s in rows.reshape(-1, 4).tolist()
        }


@dataclass
class SampleScores:
    """One sample's scores at epoch end: values, skip reasons, the metrics' caveats, bootstrap
    replicates (names of the distributional ones in `distributional`) and per-sequence rows by
    split index."""

    values: dict[str, float | None] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    caveats: dict[str, str] = field(default_factory=dict)
    replicates: dict[str, np.ndarray] = field(default_factory=dict)
    distributional: set[str] = field(default_factory=set)
    per_sequence: dict[int, dict[str, float]] = field(default_factory=dict)


class Evaluator(pl.LightningModule):
    """Scores `model` against the reference with `metrics`, one metric set (name → GestureMetric)
    per sample of the model (`model.samples`, built alike), and with `across_samples` (metrics of
    each sequence's K samples together, skipped with one); `stats` sets the intervals (None or 0
    resamples: none)."""

    def __init__(
        self,
        model: GestureModel,
        body_model: torch.nn.Module,
        metrics: list[dict[str, GestureMetric]],
        cache: MotionCache,
        length_policy: LengthPolicy = "truncate",
        max_length_gap: float = 1.0,
        needs_vertices: bool = True,
        stats: BootstrapOptions | None = None,
        across_samples: dict[str, GestureMetric] | None = None,
    ):
        super().__init__()
        self.model = model
        self.body_model = body_model
        self.metrics = torch.nn.ModuleList(torch.nn.ModuleDict(m) for m in metrics)
        #: the same metric sets, typed (the ModuleList registers them as submodules)
        self.gesture_metrics = metrics
        self.frame_logs = [FrameLog() for _ in metrics]
        self.frame_log_modules = torch.nn.ModuleList(self.frame_logs)  # registered as submodules
        self.across_samples = across_samples or {}
        self.across_modules = torch.nn.ModuleDict(self.across_samples)  # registered as submodules
        #: the seed of each sample (a single sample keeps the model's own)
        self.seeds = [model.seed + k for k in range(len(metrics))]
        self.cache = cache
        self.length_policy = length_policy
        self.max_length_gap = max_length_gap
        self.needs_vertices = needs_vertices
        self.stats = stats
        self.results: dict[str, Any] | None = None
        #: seconds spent per stage in this process (read, model, smplx, metric:<name>), for
        #: benchmarks
        self.timings: dict[str, float] = defaultdict(float)
        self._step_end: float | None = None

    @contextmanager
    def timed(self, stage: str):
        start = time.perf_counter()
        yield
        self.timings[stage] += time.perf_counter() - start

    def on_test_epoch_start(self) -> None:
        metrics = [m for ms in self.gesture_metrics for m in ms.values()]
        for metric in (*metrics, *self.frame_logs, *self.across_samples.values()):
            metric.reset()

    def test_step(self, record: SequenceRecord, batch_idx: int) -> None:
        if (
            self._step_end is not None
        ):  # time since the previous step: reading and collating this record
            self.timings["read"] += time.perf_counter() - self._step_end
        references: dict[str, BodyOutput] = {}  # the reference's body, shared by the samples
        if len(self.seeds) == 1:
            self.score(record, self.gesture_metrics[0], self.frame_logs[0], references)
            return
        poses = []
        for seed, metrics, frame_log in zip(self.seeds, self.gesture_metrics, self.frame_logs):
            self.model.reseed(seed)
            poses.append(self.score(record, metrics, frame_log, references).poses)
        self.model.reseed(self.seeds[0])
        for name, metric in self.across_samples.items():
            with self.timed(f"metric:{name}"):
                metric.update(record.index, poses)

    def score(
        self,
        record: SequenceRecord,
        metrics: dict[str, GestureMetric],
        frame_log: FrameLog,
        references: dict[str, BodyOutput],
    ) -> Motion:
        """Generate `record`'s motion, update `metrics` and `frame_log` with it; return it (as
        scored). `references` keeps the reference's body by content hash, so that K samples of
        one length run its SMPL-X forward once."""
        with self.timed("model"):
            generated = self.cache.get(self.model, record)  # held to the motion contract
        generated, reference, dropped = align_lengths(
            generated,
            record.motion,
            record.id,
            self.length_policy,
            self.max_length_gap,
            record.speech_seconds,
        )
        with self.timed("smplx"):
            gen_body = self.body_model(generated, vertices=self.needs_vertices)
            key = reference.content_hash()
            if generated is reference or generated.content_hash() == key:
                references.setdefault(key, gen_body)
            elif key not in references:
                references[key] = self.body_model(reference, vertices=self.needs_vertices)
            ref_body = references[key]
        pair = MotionPair(
            index=record.index,
            sequence_id=record.id,
            generated=generated,
            reference=reference,
            gen_body=gen_body,
            ref_body=ref_body,
            audio=record.audio,
            words=record.words,
            sem=record.sem,
            model_name=self.model.name,
            left_out=record.left_out,
        )
        for name, metric in metrics.items():
            if metric.annotates:
                with self.timed(f"annotate:{name}"):
                    annotated(pair, metric)
        for name, metric in metrics.items():
            with self.timed(f"metric:{name}"):
                metric.update(pair)
        frame_log.update(record.index, generated.n_frames, dropped, is_motionless(generated))
        return generated

    def on_test_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0) -> None:
        # The sequence's body outputs are gone now: hand their memory back, so that resident memory
        # stays at what the longest sequence needs however many are scored.
        with self.timed("release"):
            release_freed_memory()
        self._step_end = time.perf_counter()

    def on_test_epoch_end(self) -> None:
        frames = [log.compute() for log in self.frame_logs]
        resamples = self.resamples(frames[0])
        samples = [self.sample_scores(m, resamples) for m in self.gesture_metrics]
        across = (
            self.sample_scores(self.across_samples, resamples)
            if len(samples) > 1
            else unsampled(self.across_samples)
        )
        values = {**mean_values([s.values for s in samples]), **across.values}
        ranges = {n: m.value_range for m in self.gesture_metrics[0].values() for n in m.value_names}
        replicates = {
            n: np.mean([s.replicates[n] for s in samples], axis=0)
            for n in samples[0].replicates
            if all(n in s.replicates for s in samples)
        }
        replicates.update(across.replicates)
        skipped: dict[str, str] = {}
        for scores in (*samples, across):
            skipped.update(scores.skipped)
        self.results = {
            "metrics": values,
            "skipped": skipped,
            "intervals": self.intervals(replicates, values, samples[0].distributional, ranges),
            "replicates": {
                n: r.tolist() for n, r in replicates.items() if n in samples[0].distributional
            },
            "per_sequence": per_sequence_rows(samples, across, frames),
            "caveats": value_caveats(samples, values, frames[0]),
            "samples": sample_summary(self.seeds, [s.values for s in samples]),
            "timings": self.timings,
        }

    def sample_scores(
        self, metrics: dict[str, GestureMetric], resamples: Resamples | None
    ) -> SampleScores:
        """The values, skip reasons, replicates and per-sequence rows of one metric set."""
        scores = SampleScores()
        for name, metric in metrics.items():
            with self.timed(f"metric:{name}"):
                scores.values.update(metric.compute())
            with metric.sync_context():  # the reduced states: what every process scored
                reason = metric.skip_reason()
                caveat = None if reason else metric.caveat()
                rows = metric.per_sequence()
                if resamples is not None and reason is None:
                    with self.timed(f"bootstrap:{name}"):
                        drawn = self.replicates(metric, resamples)
                    scores.replicates.update(drawn)
                    if metric.distributional:
                        scores.distributional.update(drawn)
            if reason:
                scores.skipped.update({n: reason for n in metric.value_names})
            if caveat:
                scores.caveats.update({n: caveat for n in metric.value_names})
            for index, row in rows.items():
                scores.per_sequence.setdefault(index, {}).update(row)
        return scores

    def resamples(self, frames: dict[int, dict[str, int]]) -> Resamples | None:
        """The bootstrap's resamples of the scored sequences, on rank 0 when `stats` asks for
        any."""
        if self.stats is None or not self.stats.bootstrap or not frames or self.global_rank:
            return None
        return Resamples.draw(sorted(frames), self.stats.bootstrap, self.stats.seed)

    def replicates(self, metric: GestureMetric, resamples: Resamples) -> dict[str, np.ndarray]:
        """`metric`'s bootstrap replicates (a distributional metric's on the first
        `stats.distributional` resamples)."""
        assert self.stats is not None
        if metric.distributional:
            resamples = resamples.head(self.stats.distributional)
        return metric.bootstrap(resamples)

    def intervals(
        self,
        replicates: dict[str, np.ndarray],
        values: dict[str, float | None],
        distributional: Collection[str],
        ranges: dict[str, tuple[float, float]],
    ) -> dict[str, list[float]]:
        """The percentile interval of each value with `replicates` that has a value; a
        distributional value's is median-bias corrected within its range
        (`percentile_interval`)."""
        assert self.stats is not None
        out = {}
        for n, drawn in replicates.items():
            value = values.get(n)
            if value is None:
                continue
            if n in distributional:
                interval = percentile_interval(drawn, self.stats.confidence, value, ranges[n])
            else:
                interval = percentile_interval(drawn, self.stats.confidence)
            if interval is not None:
                out[n] = interval
        return out


def mean_values(samples: list[dict[str, float | None]]) -> dict[str, float | None]:
    """Each value's mean over the samples (None where a sample has none)."""
    return {
        n: None
        if any(s.get(n) is None for s in samples)
        else float(np.mean([s[n] for s in samples]))
        for n in samples[0]
    }


def unsampled(metrics: dict[str, GestureMetric]) -> SampleScores:
    """The scores of metrics of the K samples together in a run of one sample: no value, each
    skipped with the reason its (unfed) states give."""
    scores = SampleScores()
    for metric in metrics.values():
        reason = metric.skip_reason()
        assert reason is not None  # unfed states give one
        scores.values.update(dict.fromkeys(metric.value_names))
        scores.skipped.update(dict.fromkeys(metric.value_names, reason))
    return scores


def per_sequence_rows(
    samples: list[SampleScores], across: SampleScores, frames: list[dict[int, dict[str, int]]]
) -> list[dict[str, Any]]:
    """One row per sequence (``index``), and per sample (``sample``) with several; a sequence's
    values across samples (div_sample) are on each of its rows."""
    rows = []
    for k, (scores, counts) in enumerate(zip(samples, frames)):
        for index in sorted(set(scores.per_sequence) | set(counts)):
            row: dict[str, Any] = {"index": index}
            if len(samples) > 1:
                row["sample"] = k
            rows.append(
                row
                | scores.per_sequence.get(index, {})
                | across.per_sequence.get(index, {})
                | counts.get(index, {})
            )
    return sorted(rows, key=lambda r: (r["index"], r.get("sample", 0)))


def value_caveats(
    samples: list[SampleScores], values: dict[str, float | None], frames: dict[int, dict[str, int]]
) -> dict[str, str]:
    """results.json `caveats`: each value's caveats, the metrics' own (e.g. sequences scored
    without their left-out audio) then a degenerate output's (`degenerate_caveats`)."""
    caveats: dict[str, str] = {}
    for scores in samples:
        caveats.update({n: c for n, c in scores.caveats.items() if values.get(n) is not None})
    motionless = [bool(f["motionless"]) for f in frames.values()]
    for n, c in degenerate_caveats(motionless, values).items():
        caveats[n] = f"{caveats[n]}; {c}" if n in caveats else c
    return caveats


def sample_summary(
    seeds: list[int], samples: list[dict[str, float | None]]
) -> dict[str, Any] | None:
    """results.json `samples` with several: their count, seeds, each value per sample and its
    spread (standard deviation across samples, ddof 1) where every sample has it; None with one."""
    if len(samples) < 2:
        return None
    values = {n: [s.get(n) for s in samples] for n in samples[0]}
    spread = {}
    for n, v in values.items():
        defined = [x for x in v if x is not None]
        if len(defined) == len(v):
            spread[n] = float(np.std(defined, ddof=1))
    return {"k": len(samples), "seeds": seeds, "values": values, "spread": spread}
