"""`Evaluator`: the LightningModule that scores one motion source on one split with a set of
metrics.

Per sequence (`test_step`): generated motion (cached), the length policy, one SMPL-X forward per
motion shared by all metrics (one in all when the generated motion is the reference's), one
`MotionPair` to every metric. At epoch end every process computes (metric states are reduced across
processes) and rank 0 keeps the results, with each scored value's bootstrap interval
(docs/statistics.md) from the reduced states.
"""

from __future__ import annotations

import time
from collections import defaultdict
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytorch_lightning as pl
import torch
from torchmetrics import Metric

from gesturebench.data.lengths import align_lengths
from gesturebench.data.records import SequenceRecord
from gesturebench.memory import release_freed_memory
from gesturebench.metrics.base import GestureMetric, cat_state
from gesturebench.metrics.pair import MotionPair
from gesturebench.models.base import GestureModel
from gesturebench.models.cache import MotionCache
from gesturebench.stats.bootstrap import BootstrapOptions, Resamples, percentile_interval


class FrameLog(Metric):
    """Per-sequence frame counts (evaluated, dropped by the length policy), gathered across
    processes."""

    full_state_update = False
    rows: list[torch.Tensor]

    def __init__(self) -> None:
        super().__init__()
        self.add_state("rows", default=[], dist_reduce_fx="cat")

    def update(self, index: int, n_frames: int, dropped: int) -> None:
        self.rows.append(
            torch.tensor([[index, n_frames, dropped]], dtype=torch.int64, device=self.device)
        )

    def compute(self) -> dict[int, dict[str, int]]:
        rows = cat_state(self.rows)
        if rows is None:
            return {}
        return {int(i): {"frames": int(n), "dropped_frames": int(d)} for i, n, d in rows.tolist()}


class Evaluator(pl.LightningModule):
    """Scores `model` against the reference with `metrics` (a dict name → GestureMetric); `stats`
    sets the intervals (None or 0 resamples: none)."""

    def __init__(
        self,
        model: GestureModel,
        body_model: torch.nn.Module,
        metrics: dict[str, GestureMetric],
        cache: MotionCache,
        length_policy: str = "truncate",
        max_length_gap: float = 1.0,
        needs_vertices: bool = True,
        stats: BootstrapOptions | None = None,
    ):
        super().__init__()
        self.model = model
        self.body_model = body_model
        self.metrics = torch.nn.ModuleDict(metrics)
        #: the same metrics, typed (the ModuleDict registers them as submodules)
        self.gesture_metrics = metrics
        self.frame_log = FrameLog()
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
        for m in (*self.gesture_metrics.values(), self.frame_log):
            m.reset()

    def test_step(self, record: SequenceRecord, batch_idx: int) -> None:
        if (
            self._step_end is not None
        ):  # time since the previous step: reading and collating this record
            self.timings["read"] += time.perf_counter() - self._step_end
        with self.timed("model"):
            generated = self.cache.get(self.model, record)
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
            same = generated is reference or generated.content_hash() == reference.content_hash()
            ref_body = (
                gen_body if same else self.body_model(reference, vertices=self.needs_vertices)
            )
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
        )
        for name, metric in self.gesture_metrics.items():
            with self.timed(f"metric:{name}"):
                metric.update(pair)
        self.frame_log.update(record.index, generated.n_frames, dropped)

    def on_test_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0) -> None:
        # The sequence's body outputs are gone now: hand their memory back, so that resident memory
        # stays at what the longest sequence needs however many are scored.
        with self.timed("release"):
            release_freed_memory()
        self._step_end = time.perf_counter()

    def on_test_epoch_end(self) -> None:
        values: dict[str, float | None] = {}
        skipped: dict[str, str] = {}
        intervals: dict[str, list[float]] = {}
        replicates: dict[str, list[float]] = {}
        per_sequence: dict[int, dict[str, float]] = {}
        frames = self.frame_log.compute()
        resamples = self.resamples(frames)
        for name, metric in self.gesture_metrics.items():
            with self.timed(f"metric:{name}"):
                values.update(metric.compute())
            with metric.sync_context():  # the reduced states: what every process scored
                reason = metric.skip_reason()
                rows = metric.per_sequence()
                if resamples is not None and reason is None:
                    with self.timed(f"bootstrap:{name}"):
                        drawn = self.replicates(metric, resamples)
                    intervals.update(self.intervals(drawn, values))
                    if metric.distributional:
                        replicates.update({n: r.tolist() for n, r in drawn.items()})
            if reason:
                skipped.update({n: reason for n in metric.value_names})
            for index, row in rows.items():
                per_sequence.setdefault(index, {}).update(row)
        for index, counts in frames.items():
            per_sequence.setdefault(index, {}).update(counts)
        self.results = {
            "metrics": values,
            "skipped": skipped,
            "intervals": intervals,
            "replicates": replicates,
            "per_sequence": per_sequence,
            "timings": self.timings,
        }

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
        self, replicates: dict[str, np.ndarray], values: dict[str, float | None]
    ) -> dict[str, list[float]]:
        """The percentile interval of each value with `replicates` that has a value."""
        assert self.stats is not None
        out = {}
        for n, drawn in replicates.items():
            interval = percentile_interval(drawn, self.stats.confidence)
            if values.get(n) is not None and interval is not None:
                out[n] = interval
        return out
