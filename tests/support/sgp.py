"""SGP's test inputs: a context of generated data, pairs with given joints and sem intervals, a
still motion, and hand-made annotation stores (`HAND_MADE`, with their hand-computed SGP) replayed
by the metric."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from gesturebench.annotation.backends.replay import ReplayAnnotator
from gesturebench.annotation.events import collect_events
from gesturebench.annotation.schema import AnnotationRecord
from gesturebench.annotation.store import AnnotationStore, store_path
from gesturebench.body.output import BodyOutput
from gesturebench.data.records import Motion, SemInterval
from gesturebench.metrics.context import MetricContext
from gesturebench.metrics.pair import MotionPair
from gesturebench.metrics.sgp import SemanticGesturePreservation


def context(cache_dir: Path) -> MetricContext:
    """A context of generated data (the synthetic kind, where the kinematic rules are valid)."""
    return MetricContext(
        "test",
        split=lambda name: [],
        cache_dir=cache_dir,
        checkpoints_dir=cache_dir,
        body_model=None,
        auto_train=True,
    )


def pair(
    index: int,
    seq: str,
    generated: Motion,
    reference: Motion,
    gen_joints,
    ref_joints,
    sem,
    words=None,
    model="model",
) -> MotionPair:
    return MotionPair(
        index=index,
        sequence_id=seq,
        generated=generated,
        reference=reference,
        gen_body=BodyOutput(torch.as_tensor(gen_joints), None),
        ref_body=BodyOutput(torch.as_tensor(ref_joints), None),
        sem=sem,
        words=words,
        model_name=model,
    )


def still_motion(n: int) -> Motion:
    return Motion(np.zeros((n, 165)), np.zeros((n, 3)), np.zeros(10), np.zeros((n, 100)))


# (reference class or "invalid", generated class or "invalid") per event; None: a sequence without a
# sem file. BEAT2's own class of each event (its sem name) is the reference class where that is one
# of BEAT2's classes, so `valid_from=beat2` and `valid_from=annotator` find the same valid events.
HAND_MADE = {
    "a": [("iconic", "beat"), ("beat", "beat"), ("deictic", "deictic"), ("metaphoric", "invalid")],
    "b": [("beat", "iconic"), ("none", "beat")],  # no valid event: excluded
    "c": [("metaphoric", "none"), ("iconic", "uncertain"), ("uncertain", "beat")],
    "d": None,  # no sem: excluded, not scored
    "e": [("deictic", "invalid")],  # its only valid event is invalid: counted, and not a beat
    "f": [
        ("invalid", "beat"),
        ("iconic", "beat"),
        ("metaphoric", "metaphoric"),
        ("deictic", "iconic"),
    ],
}
# a: valid iconic, deictic, metaphoric → beat, deictic, (invalid) → 1 − 1/3; c: none, uncertain → 1;
# e: (invalid) → 1 − 0/1; f: the invalid reference is not valid; beat, metaphoric, iconic → 1 − 1/3.
HAND_SGP = np.mean([2 / 3, 1.0, 1.0, 2 / 3])
HAND_INVALID = 2
HAND_EVENTS = 9  # valid events: 3 + 2 + 1 + 3
HAND_CLASSES = {"beat": 2, "deictic": 1, "none": 1, "uncertain": 1, "metaphoric": 1, "iconic": 1}


def manual_record(event, source, cls) -> AnnotationRecord:
    common = {
        "event_id": event.id,
        "sequence_id": event.sequence_id,
        "start": event.start,
        "end": event.end,
        "source": source,
        "annotator": "manual",
        "annotator_model": "person",
        "prompt_sha256": "",
    }
    if cls == "invalid":
        return AnnotationRecord(**common, status="invalid", error="answer not JSON", raw="{oops")
    return AnnotationRecord(
        **common,
        status="ok",
        word="w",
        gesture_description="d",
        contextual_meaning="m",
        gesture_class=cls,
        confidence=1.0,
    )


def beat2_name(reference_class: str) -> str:
    """A sem name whose BEAT2 class is `reference_class` where BEAT2 has it (else one without)."""
    return {"none": "nogesture", "uncertain": "habit", "invalid": "habit"}.get(
        reference_class, reference_class
    )


def hand_made(root: Path) -> list[MotionPair]:
    """Stores under `root` for HAND_MADE and the pairs whose events they annotate (motion is never
    looked at)."""
    pairs = []
    ref, gen = (
        AnnotationStore(store_path(root, "reference", "manual")),
        AnnotationStore(store_path(root, "model", "manual")),
    )
    for index, (seq, spec) in enumerate(HAND_MADE.items()):
        sem = (
            None
            if spec is None
            else [
                SemInterval(beat2_name(r), 2.0 * i + 1, 2.0 * i + 2, 0.5, f"k{i}")
                for i, (r, _) in enumerate(spec)
            ]
        )
        for event, (r, g) in zip(collect_events(seq, sem), spec or []):
            ref.append(manual_record(event, "reference", r))
            gen.append(manual_record(event, "model", g))
        m = still_motion(300)
        zeros = np.zeros((300, 55, 3), np.float32)
        pairs.append(pair(index, seq, m, m, zeros, zeros, sem))
    return pairs


def replay_metric(root: Path, valid_from: str = "annotator") -> SemanticGesturePreservation:
    """SGP replaying the hand-made stores (a replayed store declares no validity: forced)."""
    metric = SemanticGesturePreservation(
        annotator=ReplayAnnotator(of="manual"),
        store_root=str(root),
        valid_from=valid_from,
        unvalidated=True,
    )
    metric.prepare(context(root))
    return metric
