"""SGP (metrics/sgp.py) and the kinematic annotator on mini-BEAT2: values checked against hand-made
stores, independent recomputation and the generator's known gesture classes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from sklearn.metrics import confusion_matrix

from gesturebench.annotation.backends.kinematic import KinematicAnnotator
from gesturebench.annotation.backends.replay import ReplayAnnotator
from gesturebench.annotation.clip import make_clip
from gesturebench.annotation.events import collect_events
from gesturebench.annotation.store import AnnotationStore, store_path
from gesturebench.data.gesture_classes import GESTURE_CLASSES, SEMANTIC_CLASSES
from gesturebench.data.records import Motion, SemInterval
from gesturebench.metrics.base import annotated
from gesturebench.metrics.sgp import SemanticGesturePreservation, clip_sgp
from gesturebench.models.perturbed import BeatCollapse, Perturbed
from gesturebench.runtime.errors import ConfigError
from tests.distributed import run_distributed
from tests.support.sgp import (
    HAND_CLASSES,
    HAND_EVENTS,
    HAND_INVALID,
    HAND_SGP,
    context,
    hand_made,
    manual_record,
    pair,
    replay_metric,
    still_motion,
)

FPS = 30


# ------------------------------------------------------------------------------------------ pure
# maths


def test_clip_sgp_by_hand():
    assert clip_sgp(["iconic", "beat", "deictic", "beat"]) == 0.5
    # an event without a valid generated annotation stays in n(E_c) (the paper's Eq. 13)
    assert clip_sgp(["beat", None, "none"]) == pytest.approx(2 / 3)
    assert clip_sgp([None, None]) == 1.0
    assert clip_sgp([]) is None
    assert clip_sgp(["uncertain"]) == 1.0  # only beat counts as a collapse


# ------------------------------------------------------------------------------------------
# hand-made store (tests/support/sgp.py)


@pytest.mark.parametrize("valid_from", ["annotator", "beat2"])
def test_hand_made_store_gives_the_hand_computed_sgp(tmp_path, valid_from):
    pairs = hand_made(tmp_path)
    if valid_from == "beat2":  # BEAT2's classes need no reference annotation
        store_path(tmp_path, "reference", "manual").unlink()
    metric = replay_metric(tmp_path, valid_from)
    for p in pairs:
        metric.update(annotated(p, metric))
    out = metric.compute()
    assert out["sgp"] == pytest.approx(HAND_SGP, abs=1e-12)
    assert out["sgp_invalid"] == HAND_INVALID
    assert out["sgp_events"] == HAND_EVENTS
    for c in GESTURE_CLASSES:  # shares among the 7 valid generated annotations
        assert out[f"sgp_class_{c}"] == pytest.approx(HAND_CLASSES.get(c, 0) / 7)
    rows = metric.per_sequence()
    assert set(rows) == {0, 1, 2, 4, 5}  # d (no sem) has no row
    assert rows[0]["sgp"] == pytest.approx(2 / 3) and rows[0]["sgp_invalid"] == 1
    assert np.isnan(rows[1]["sgp"]) and rows[4]["sgp"] == 1.0 and rows[4]["sgp_invalid"] == 1
    assert int(metric.missing) == 1 and metric.skip_reason() is None


def test_valid_events_come_from_beat2_by_default(tmp_path):
    """An event BEAT2 calls iconic whose reference annotation reads beat: valid under `beat2` (and
    its generated beat makes SGP 0), not under `annotator` (no valid event: no value)."""
    sem = [SemInterval("05_iconic_l", 1.0, 2.0, 0.5, "round")]
    (event,) = collect_events("g", sem)
    AnnotationStore(store_path(tmp_path, "reference", "manual")).append(
        manual_record(event, "reference", "beat")
    )
    AnnotationStore(store_path(tmp_path, "model", "manual")).append(
        manual_record(event, "model", "beat")
    )
    m, zeros = still_motion(90), np.zeros((90, 55, 3), np.float32)
    values = {}
    for valid_from in ("beat2", "annotator"):
        metric = replay_metric(tmp_path, valid_from)
        metric.update(annotated(pair(0, "g", m, m, zeros, zeros, sem), metric))
        values[valid_from] = metric.compute()["sgp"]
    assert values == {"beat2": 0.0, "annotator": None}


def test_replay_errors_on_a_missing_event(tmp_path):
    pairs = hand_made(tmp_path)
    extra = [*pairs[0].sem, SemInterval("x", 8.5, 9.0, 0.5, "new")]
    metric = replay_metric(tmp_path)
    with pytest.raises(Exception, match="no annotation of event"):
        metric.update(
            annotated(
                pair(
                    0,
                    "a",
                    pairs[0].generated,
                    pairs[0].reference,
                    pairs[0].gen_body.joints,
                    pairs[0].ref_body.joints,
                    extra,
                ),
                metric,
            )
        )


class Guarded(ReplayAnnotator):
    """The replay annotator, counting its clips and refusing any while `scoring` is set."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.scoring, self.asked = False, 0

    def ask(self, clip):
        assert not self.scoring, "the annotator was asked during update"
        self.asked += 1
        return super().ask(clip)


def test_update_only_reads_the_annotation_stage(tmp_path):
    """Annotation happens before scoring: `update` never asks the annotator, and refuses a pair
    the annotation stage has not seen."""
    pairs = hand_made(tmp_path)
    annotator = Guarded(of="manual")
    metric = SemanticGesturePreservation(
        annotator=annotator, store_root=str(tmp_path), unvalidated=True
    )
    metric.prepare(context(tmp_path))
    ready = [annotated(p, metric) for p in pairs]
    assert annotator.asked >= HAND_EVENTS and ready[3].annotations == {"sgp": None}  # d: no sem
    annotator.scoring = True
    for p in ready:
        metric.update(p)
    assert metric.compute()["sgp"] == pytest.approx(HAND_SGP, abs=1e-12)
    with pytest.raises(ConfigError, match="a was not annotated"):
        metric.update(hand_made(tmp_path / "again")[0])


def test_no_valid_event_gives_none_with_a_reason(tmp_path):
    pairs = hand_made(tmp_path)
    metric = replay_metric(tmp_path)
    metric.update(annotated(pairs[1], metric))
    out = metric.compute()
    assert out["sgp"] is None and "no clip had a valid semantic event" in metric.skip_reason()


def _ddp_worker(rank: int, world: int, root: str) -> dict:
    pairs = hand_made(Path(root) / f"rank{rank}")
    metric = replay_metric(Path(root) / f"rank{rank}")
    for p in pairs[rank::world]:
        metric.update(annotated(p, metric))
    out = metric.compute()
    with metric.sync_context():
        out["per_sequence"] = metric.per_sequence()
    return out


@pytest.mark.slow  # two processes of the DDP pool (tests/distributed.py)
def test_distributed_equals_one_process(tmp_path):
    ddp = run_distributed(_ddp_worker, str(tmp_path))
    assert ddp["sgp"] == pytest.approx(HAND_SGP, abs=1e-12)
    assert ddp["sgp_invalid"] == HAND_INVALID
    assert sorted(ddp["per_sequence"]) == [0, 1, 2, 4, 5]


# ------------------------------------------------------------------------------------------
# mini-BEAT2


class WindowJoints:
    """Joints of only the event windows of a motion (zeros elsewhere), cached by the window's motion
    hash: what SGP reads, at a fraction of a full-sequence body-model forward."""

    def __init__(self):
        from gesturebench.body.model import BodyModel

        self.body_model = BodyModel()
        self.cache: dict[str, np.ndarray] = {}

    def __call__(self, motion: Motion, events) -> np.ndarray:
        out = np.zeros((motion.n_frames, 55, 3), np.float32)
        for event in events:
            f0, f1 = event.window(motion.n_frames, motion.fps)
            window = motion.frames(f0, f1)
            key = window.content_hash()
            if key not in self.cache:
                self.cache[key] = self.body_model(window, vertices=False).joints.numpy()
            out[f0:f1] = self.cache[key]
        return out


@pytest.fixture(scope="module")
def mini_test():
    from gesturebench.data.beat2 import Beat2Dataset
    from gesturebench.synthesis.mini.dataset import ensure_mini_beat2
    from tests.helpers import REPO

    torch.set_num_threads(1)
    root = ensure_mini_beat2(REPO / "data" / "mini_beat2_default")
    dataset = Beat2Dataset(root, "test", load_audio=False)
    records = [dataset[i] for i in range(len(dataset))]
    joints = WindowJoints()
    reference = [joints(r.motion, collect_events(r.id, r.sem, r.words)) for r in records]
    return records, reference, joints


def _mini_pairs(records, reference, joints, model=None):
    out = []
    for r, ref in zip(records, reference):
        generated = r.motion if model is None else model.generate(r)
        gen = ref if model is None else joints(generated, collect_events(r.id, r.sem, r.words))
        out.append(
            pair(
                r.index,
                r.id,
                generated,
                r.motion,
                gen,
                ref,
                r.sem,
                r.words,
                model="ground_truth" if model is None else model.name,
            )
        )
    return out


def test_kinematic_separates_semantic_from_beat_on_mini_test(mini_test):
    records, reference, _ = mini_test
    annotator = KinematicAnnotator()
    truth, predicted = [], []
    for r, joints in zip(records, reference):
        for event in collect_events(r.id, r.sem, r.words):
            clip = make_clip(event, "reference", r.motion, lambda a, b, j=joints: j[a:b])
            truth.append(event.label)
            predicted.append(annotator.ask(clip).gesture_class)
    semantic = [t in SEMANTIC_CLASSES for t in truth]
    accuracy = np.mean([s == (p in SEMANTIC_CLASSES) for s, p in zip(semantic, predicted)])
    labels = ["iconic", "metaphoric", "deictic", "beat", "none"]
    print("\nkinematic annotator, mini-BEAT2 test split (rows: true class, columns: predicted):")
    print(labels, "\n", confusion_matrix(truth, predicted, labels=labels))
    assert len(truth) >= 20 and {"beat"} < set(truth)
    assert accuracy >= 0.85


def test_ground_truth_sgp_is_high_and_reference_store_is_written(mini_test, tmp_path):
    records, reference, joints = mini_test
    metric = SemanticGesturePreservation(store_root=str(tmp_path), valid_from="annotator")
    metric.prepare(context(tmp_path))
    for p in _mini_pairs(records, reference, joints):
        metric.update(annotated(p, metric))
    out = metric.compute()
    assert out["sgp"] >= 0.9 and out["sgp_invalid"] == 0
    stored = AnnotationStore(store_path(tmp_path, "reference", "kinematic")).records()
    assert len(stored) == sum(len(r.sem) for r in records) and {s.status for s in stored} == {"ok"}
    # reuses the store: nothing appended
    again = SemanticGesturePreservation(store_root=str(tmp_path), valid_from="annotator")
    again.prepare(context(tmp_path))
    again.update(annotated(_mini_pairs(records[:1], reference[:1], joints)[0], again))
    assert len(AnnotationStore(store_path(tmp_path, "reference", "kinematic")).records()) == len(
        stored
    )


@pytest.mark.parametrize("fraction", [0.25, 0.5, 1.0])
def test_beat_collapse_lowers_sgp_by_its_fraction(mini_test, tmp_path, fraction):
    records, reference, joints = mini_test
    scores = {}
    for model in (
        None,
        Perturbed(BeatCollapse(), name=f"collapse_{fraction}", level=fraction),
    ):
        metric = SemanticGesturePreservation(store_root=str(tmp_path))
        metric.prepare(context(tmp_path))
        for p in _mini_pairs(records, reference, joints, model):
            metric.update(annotated(p, metric))
        scores[model is None] = metric.compute()["sgp"]
    assert scores[True] - scores[False] == pytest.approx(fraction, abs=0.1)
