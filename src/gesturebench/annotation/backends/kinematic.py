"""`KinematicAnnotator`: the offline default, a classifier over motion features of the event window.

Rules (`classify`, first match wins), on the features of `annotation.features` (set on mini-BEAT2's
train split, where they separate the generator's gesture forms; on real data prefer a model fitted
to LLM annotations):

| class | rule |
| --- | --- |
| deictic | `finger_change` ≥ 0.15 hand lengths: a pointing hand shape forms |
| iconic | `height` ≥ 0.72 (hands at the chest), `path_length` ≥ 3.3 shoulder widths (traced) |
| metaphoric | `hand_distance_change` ≥ 0.72 shoulder widths (hands open outward, presenting) |
| none | `path_length` < 0.5 shoulder widths (the hands hardly move) |
| beat | anything else: movement without a shape, a pointing hand or a presenting opening |

Confidence is 0.5 plus half the decisive feature's relative margin to its threshold, capped at 1.

With `fit_to=<annotator>` and that annotator's reference store present (e.g. gemini's), a small
model — standardised features, multinomial logistic regression with balanced class weights
(scikit-learn) — is fitted to its `ok` records on the `fit_split` split instead, and its class
probability is the confidence.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from gesturebench.annotation.backends.base import Annotator
from gesturebench.annotation.clip import EventClip
from gesturebench.annotation.events import collect_events
from gesturebench.annotation.features import FEATURES, hand_features, motion_features
from gesturebench.annotation.schema import GestureAnswer
from gesturebench.annotation.store import AnnotationStore, store_path
from gesturebench.runtime.errors import ConfigError

RULES_VERSION = "rules-v1"
THRESHOLDS = {
    "deictic_finger_change": 0.15,
    "iconic_height": 0.72,
    "iconic_path_length": 3.3,
    "metaphoric_hand_distance_change": 0.72,
    "none_path_length": 0.5,
}
MIN_FIT_EVENTS = 10


def _confidence(margin: float) -> float:
    return float(min(1.0, 0.5 + 0.5 * max(margin, 0.0)))


def classify(
    features: dict[str, float], thresholds: dict[str, float] = THRESHOLDS
) -> tuple[str, float]:
    """(class, confidence) of the rules in the module docstring."""
    t, f = thresholds, features
    rel = {  # relative margin of each semantic rule: > 0 when it fires
        "deictic": f["finger_change"] / t["deictic_finger_change"] - 1,
        "iconic": min(f["height"] / t["iconic_height"], f["path_length"] / t["iconic_path_length"])
        - 1,
        "metaphoric": f["hand_distance_change"] / t["metaphoric_hand_distance_change"] - 1,
    }
    for name, margin in rel.items():
        if margin >= 0:
            return name, _confidence(margin)
    closest = -max(rel.values())
    if f["path_length"] < t["none_path_length"]:
        return "none", _confidence(min(closest, 1 - f["path_length"] / t["none_path_length"]))
    return "beat", _confidence(min(closest, f["path_length"] / t["none_path_length"] - 1))


def describe_motion(joints: np.ndarray, fps: int, features: dict[str, float]) -> str:
    """A plain-language summary of the features (the kinematic `gesture_description`)."""
    paths = [hand_features(joints, fps, h)["path_length"] for h in (0, 1)]
    hands = (
        "both hands"
        if min(paths) >= 0.7 * max(paths)
        else ("left hand" if paths[0] > paths[1] else "right hand")
    )
    f = features
    return (
        f"{hands} most active; wrist travels {f['path_length']:.2f} shoulder widths within a "
        f"{f['extent']:.2f}-wide box, up to {f['height']:.2f} of torso height; "
        f"{int(f['strokes'])} strokes; longest hold {f['hold_time']:.2f} s; "
        f"finger articulation change {f['finger_change']:.2f} hand lengths; "
        f"distance between the hands changes by {f['hand_distance_change']:.2f} shoulder widths"
    )


class KinematicAnnotator(Annotator):
    """Offline rules over motion features, or a logistic model fitted to another annotator's
    reference store."""

    offline = True

    def __init__(
        self,
        name: str = "kinematic",
        fit_to: str | None = None,
        fit_split: str = "train",
        **annotator: Any,
    ):
        super().__init__(name, **annotator)
        self.fit_to = fit_to
        self.fit_split = fit_split
        self.model = None
        self._model_hash: str | None = None

    @property
    def model_name(self) -> str:
        return f"logreg-fit-to-{self.fit_to}" if self.model is not None else RULES_VERSION

    def fingerprint(self) -> str:
        """Hash of the rule set (or of the fitted model): this backend's equivalent of a prompt
        hash."""
        identity = self._model_hash or json.dumps(
            {"version": RULES_VERSION, "thresholds": THRESHOLDS, "features": FEATURES},
            sort_keys=True,
        )
        return hashlib.sha256(identity.encode()).hexdigest()

    def describe(self) -> dict:
        return {**super().describe(), "fit_to": self.fit_to, "fit_split": self.fit_split}

    def prepare(self, context: Any, store_root: Path) -> None:
        if self.fit_to is None or self.model is not None:
            return
        path = store_path(store_root, "reference", self.fit_to)
        if not path.is_file():
            raise ConfigError(
                f"annotator.fit_to={self.fit_to}: no reference annotations at {path}; create them "
                f"with `python launch.py task=annotate annotator={self.fit_to} "
                f"dataset.split={self.fit_split}` "
                "or set annotator.fit_to=null for the rules"
            )
        features, labels = fit_table(
            AnnotationStore(path), context.split(self.fit_split), context.body_model, self.context
        )
        self.fit(features, labels)

    def fit(self, features: np.ndarray, labels: list[str]) -> None:
        """Fit the logistic model to a (N, len(FEATURES)) feature table and its classes."""
        if len(labels) < MIN_FIT_EVENTS or len(set(labels)) < 2:
            raise ConfigError(
                f"annotator.fit_to={self.fit_to}: fitting needs at least {MIN_FIT_EVENTS} 'ok' "
                f"reference records of 2 or more classes, found {len(labels)} of "
                f"{len(set(labels))} class(es)"
            )
        model = make_pipeline(
            StandardScaler(), LogisticRegression(max_iter=2000, class_weight="balanced")
        )
        self.model = model.fit(np.asarray(features, dtype=np.float64), labels)
        h = hashlib.sha256(np.ascontiguousarray(features, dtype=np.float64).tobytes())
        h.update(json.dumps(list(labels)).encode())
        self._model_hash = h.hexdigest()

    def ask(self, clip: EventClip) -> GestureAnswer:
        features = motion_features(clip.joints, clip.fps)
        if self.model is None:
            label, confidence = classify(features)
        else:
            proba = self.model.predict_proba(np.array([[features[n] for n in FEATURES]]))[0]
            best = int(np.argmax(proba))
            label, confidence = str(self.model.classes_[best]), float(proba[best])
        return GestureAnswer(
            word=clip.event.target,
            gesture_description=describe_motion(clip.joints, clip.fps, features),
            contextual_meaning="not assessed (the kinematic annotator sees motion only)",
            gesture_class=label,
            confidence=confidence,
        )


def fit_table(
    store: AnnotationStore, records, body_model, context: float
) -> tuple[np.ndarray, list[str]]:
    """Features of the reference motion and classes of the store's `ok` records, for the events of
    `records`."""
    latest = {rid: r for rid, r in store.latest().items() if r.status == "ok"}
    rows: list[list[float]] = []
    labels: list[str] = []
    for record in records:
        for event in collect_events(record.id, record.sem, record.words):
            annotation = latest.get(event.id)
            f0, f1 = event.window(record.n_frames, record.motion.fps, context)
            if annotation is None or annotation.gesture_class is None or f1 - f0 < 2:
                continue
            joints = body_model(record.motion.frames(f0, f1), vertices=False).joints.cpu().numpy()
            features = motion_features(joints, record.motion.fps)
            rows.append([features[n] for n in FEATURES])
            labels.append(annotation.gesture_class)
    return np.array(rows, dtype=np.float64).reshape(-1, len(FEATURES)), labels
