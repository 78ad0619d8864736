"""The kinematic annotator's fitted model: standardised features, then a multinomial logistic
regression with balanced class weights (scikit-learn), fitted to classes given by people (BEAT2's
own `sem` labels, `fit_sem`) or by another annotator (its reference store, `store_table`).

The fit is kept as its arrays (`LinearModel`), and those arrays are what predicts: a model read
back from the cache predicts bit-identically to the one just fitted. A model fitted to a dataset's
sem labels on split `fit_split` is checked on split `check_split` (its agreement with the labels
there: `review.label_agreement`) and stored in the dataset's cache folder with the check's labels
and predictions (`runtime.caches.CacheEntry`: keyed by the features, the labels' and the motion's
hashes, the body model, the splits and the seed; verified on read).
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from gesturebench.annotation.events import Event, collect_events
from gesturebench.annotation.features import FEATURES, motion_features
from gesturebench.annotation.review import label_agreement
from gesturebench.annotation.store import AnnotationStore
from gesturebench.data.gesture_classes import GESTURE_CLASSES
from gesturebench.data.records import Motion, SequenceRecord
from gesturebench.runtime.caches import CacheEntry, Schema
from gesturebench.runtime.errors import ConfigError

#: the classes a model is fitted to: BEAT2's (a sem name of another category gives no label)
FIT_CLASSES = ("iconic", "metaphoric", "deictic", "beat", "none")
MIN_FIT_EVENTS = 10
#: what `fit_linear` fits, written into the cache key (change it when the fit changes)
MODEL = "standardised features, multinomial logistic regression, balanced class weights, v1"
PRODUCER = "gesturebench.annotation.fitting"
_CLASS = Schema((None,), "iu", 0, len(GESTURE_CLASSES) - 1)
SCHEMA = {
    "mean": Schema((len(FEATURES),)),
    "scale": Schema((len(FEATURES),), low=1e-12),
    "coef": Schema((None, len(FEATURES))),
    "intercept": Schema((None,)),
    "classes": _CLASS,
    "check_truth": _CLASS,
    "check_predicted": _CLASS,
    "check_ids": Schema((None,), "u", 0, 255),
}


@dataclass(frozen=True)
class LinearModel:
    """Softmax of a linear function of standardised features: `mean`, `scale` (F,), `coef`
    (C, F), `intercept` (C,), one row per class of `classes`."""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray
    classes: tuple[str, ...]

    def predict_proba(self, features: np.ndarray) -> np.ndarray:
        """(N, C) class probabilities of an (N, F) feature table."""
        z = (np.asarray(features, dtype=np.float64) - self.mean) / self.scale
        logits = z @ self.coef.T + self.intercept
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def predict(self, features: np.ndarray) -> list[str]:
        """The most probable class of each row."""
        return [self.classes[i] for i in self.predict_proba(features).argmax(axis=1)]

    def arrays(self) -> dict[str, np.ndarray]:
        """Its arrays, the classes as indices into `GESTURE_CLASSES`."""
        return {
            "mean": self.mean,
            "scale": self.scale,
            "coef": self.coef,
            "intercept": self.intercept,
            "classes": np.array([GESTURE_CLASSES.index(c) for c in self.classes], np.int64),
        }

    @classmethod
    def from_arrays(cls, arrays: Any) -> LinearModel:
        classes = tuple(GESTURE_CLASSES[int(i)] for i in arrays["classes"])
        mean, scale, coef, intercept = (
            np.asarray(arrays[k]) for k in ("mean", "scale", "coef", "intercept")
        )
        return cls(mean, scale, coef, intercept, classes)

    def sha256(self) -> str:
        """Hash of the arrays: the fitted annotator's fingerprint."""
        h = hashlib.sha256()
        for name, array in self.arrays().items():
            h.update(name.encode() + np.ascontiguousarray(array).tobytes())
        return h.hexdigest()


def fit_linear(features: np.ndarray, labels: Sequence[str], seed: int, source: str) -> LinearModel:
    """The model fitted to an (N, F) feature table and its classes (`source`: where the classes
    come from, for the error)."""
    if len(labels) < MIN_FIT_EVENTS or len(set(labels)) < 2:
        raise ConfigError(
            f"annotator.fit_to={source}: fitting needs at least {MIN_FIT_EVENTS} labelled events "
            f"of 2 or more classes, found {len(labels)} of {len(set(labels))} class(es)"
        )
    pipeline = make_pipeline(
        StandardScaler(),
        LogisticRegression(max_iter=2000, class_weight="balanced", random_state=seed),
    ).fit(np.asarray(features, dtype=np.float64), list(labels))
    scaler, regression = pipeline[0], pipeline[1]
    coef, intercept = regression.coef_, regression.intercept_
    if len(regression.classes_) == 2:  # one row, the second class's log-odds: softmax([0, d])
        coef, intercept = np.vstack([np.zeros_like(coef), coef]), np.r_[0.0, intercept]
    return LinearModel(
        scaler.mean_.astype(np.float64),
        scaler.scale_.astype(np.float64),
        np.asarray(coef, np.float64),
        np.asarray(intercept, np.float64),
        tuple(str(c) for c in regression.classes_),
    )


# ------------------------------------------------------------------------------------ event tables


def labelled_windows(
    records: Sequence[SequenceRecord], context: float, label_of: Callable[[Event], str | None]
) -> Iterator[tuple[Event, str, Motion]]:
    """(event, its label, its window's motion) of the events of `records` that `label_of` labels
    and whose window (`context` seconds on each side) has 2 frames or more."""
    for record in records:
        for event in collect_events(record.id, record.sem or [], record.words):
            label = label_of(event)
            f0, f1 = event.window(record.n_frames, record.motion.fps, context)
            if label is not None and f1 - f0 >= 2:
                yield event, label, record.motion.frames(f0, f1)


def feature_row(body_model: Any, motion: Motion) -> list[float]:
    """The features (`FEATURES` order) of one window of motion."""
    joints = body_model(motion, vertices=False).joints.cpu().numpy()
    features = motion_features(joints, motion.fps)
    return [features[n] for n in FEATURES]


def feature_table(
    windows: Iterator[tuple[Event, str, Motion]], body_model: Any
) -> tuple[np.ndarray, list[str], list[str]]:
    """(N, F) features, labels and event ids of `windows`."""
    rows, labels, ids = [], [], []
    for event, label, motion in windows:
        rows.append(feature_row(body_model, motion))
        labels.append(label)
        ids.append(event.id)
    return np.array(rows, dtype=np.float64).reshape(-1, len(FEATURES)), labels, ids


def store_table(
    store: AnnotationStore, records: Sequence[SequenceRecord], body_model: Any, context: float
) -> tuple[np.ndarray, list[str]]:
    """Features of the reference motion and classes of the store's `ok` records, for the events of
    `records`."""
    latest = {rid: r for rid, r in store.latest().items() if r.status == "ok"}

    def label_of(event: Event) -> str | None:
        record = latest.get(event.id)
        return None if record is None else record.gesture_class

    features, labels, _ = feature_table(labelled_windows(records, context, label_of), body_model)
    return features, labels


def sem_label(event: Event) -> str | None:
    """The event's class in BEAT2's sem annotation, where it is one of `FIT_CLASSES`."""
    return event.label if event.label in FIT_CLASSES else None


# ----------------------------------------------------------------------------- fit to sem labels


@dataclass(frozen=True)
class SemFit:
    """A model fitted to a dataset's sem labels, with its check: the check split's event ids,
    their labels and the model's predictions."""

    model: LinearModel
    check_ids: tuple[str, ...]
    check_truth: tuple[str, ...]
    check_predicted: tuple[str, ...]

    @cached_property
    def agreement(self) -> dict:
        """The predictions' agreement with the check split's labels (`label_agreement`)."""
        return label_agreement(self.check_truth, self.check_predicted)

    def arrays(self) -> dict[str, np.ndarray]:
        def index(classes: Sequence[str]) -> np.ndarray:
            return np.array([GESTURE_CLASSES.index(c) for c in classes], np.int64)

        ids = np.frombuffer(json.dumps(list(self.check_ids)).encode(), np.uint8)
        return {
            **self.model.arrays(),
            "check_truth": index(self.check_truth),
            "check_predicted": index(self.check_predicted),
            "check_ids": ids,
        }

    def to_bytes(self) -> bytes:
        buffer = io.BytesIO()
        np.savez(buffer, allow_pickle=False, **self.arrays())
        return buffer.getvalue()

    @classmethod
    def read(cls, path: Path) -> SemFit:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}

        def names(index: np.ndarray) -> tuple[str, ...]:
            return tuple(GESTURE_CLASSES[int(i)] for i in index)

        return cls(
            LinearModel.from_arrays(arrays),
            tuple(json.loads(arrays["check_ids"].tobytes().decode())),
            names(arrays["check_truth"]),
            names(arrays["check_predicted"]),
        )


def _sha256(items: Any) -> str:
    return hashlib.sha256(json.dumps(items, sort_keys=True).encode()).hexdigest()


def module_sha256(module: Any) -> str:
    """Hash of a torch module's state (the body model's: the features are of its joints)."""
    h = hashlib.sha256()
    for name, tensor in sorted(module.state_dict().items()):
        h.update(name.encode() + tensor.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def sem_fit_entry(
    folder: Path, splits: dict[str, Sequence[SequenceRecord]], context: float, seed: int, body: Any
) -> CacheEntry[SemFit]:
    """The cache entry of the model fitted to the sem labels of the first split of `splits` (name
    → records) and checked on the second, keyed by everything the fit depends on."""
    labels, motion = [], hashlib.sha256()
    for split, records in splits.items():
        for event, label, window in labelled_windows(records, context, sem_label):
            labels.append([split, event.id, label])
            motion.update(window.content_hash().encode())
    key = {
        "model": MODEL,
        "features": list(FEATURES),
        "splits": list(splits),
        "context": context,
        "seed": seed,
        "labels_sha256": _sha256(labels),
        "motion_sha256": motion.hexdigest(),
        "body_sha256": module_sha256(body),
    }
    return CacheEntry(
        path=folder / f"kinematic-fit-beat2-{_sha256(key)[:16]}.npz",
        producer=PRODUCER,
        key=key,
        schema=SCHEMA,
        decode=SemFit.read,
        arrays=SemFit.arrays,
    )


def fit_sem(
    splits: dict[str, Sequence[SequenceRecord]],
    body_model: Any,
    context: float,
    seed: int,
    folder: Path,
) -> tuple[SemFit, Path]:
    """The model fitted to the sem labels of the first split of `splits` (name → records) and
    checked on the second, read from the cache `folder` or fitted and stored there; and its
    file."""
    if len(splits) != 2:
        raise ConfigError(
            "annotator.fit_to=beat2 needs two different splits to fit and check on, got "
            f"{list(splits)}"
        )
    entry = sem_fit_entry(folder, splits, context, seed, body_model)
    cached = entry.read()
    if cached is not None:
        return cached, entry.path
    (fit_name, fit), (check_name, check) = splits.items()
    features, labels, _ = feature_table(labelled_windows(fit, context, sem_label), body_model)
    model = fit_linear(features, labels, seed, f"beat2 (split {fit_name})")
    held, truth, ids = feature_table(labelled_windows(check, context, sem_label), body_model)
    if not truth:
        raise ConfigError(
            f"annotator.fit_to=beat2: split {check_name} has no event labelled "
            f"{', '.join(FIT_CLASSES)} in its sem files, so the fitted annotator's agreement "
            "cannot be measured (annotator.check_split names the split)"
        )
    result = SemFit(model, tuple(ids), tuple(truth), tuple(model.predict(held)))
    folder.mkdir(parents=True, exist_ok=True)
    entry.write(result.to_bytes())
    return result, entry.path
