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

With `fit_to=beat2`, a model over the same features (`annotation.fitting`: standardised
features, multinomial logistic regression with balanced class weights) is fitted to the dataset's
own sem labels (iconic, metaphoric, deictic, beat, none) on split `fit_split`, its agreement with
the labels measured on split `check_split`, and both stored in the dataset's cache; its class
probability is the confidence. With `fit_to=<annotator>` and that annotator's reference store
present (e.g. gemini's), the model is fitted to the store's `ok` records on `fit_split` instead.

Where it is valid (`validated_on`): the rules on the synthetic mini-BEAT2 (set there: all its 200
events classified as generated); a model fitted to sem labels on the dataset it was fitted and
checked on, with the measured agreement; a model fitted to another annotator nowhere (its agreement
with people is not measured).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from gesturebench.annotation.backends.base import Annotator
from gesturebench.annotation.clip import EventClip
from gesturebench.annotation.features import FEATURES, hand_features, motion_features
from gesturebench.annotation.fitting import LinearModel, SemFit, fit_linear, fit_sem, store_table
from gesturebench.annotation.review import class_agreement
from gesturebench.annotation.schema import GestureAnswer
from gesturebench.annotation.store import AnnotationStore, store_path
from gesturebench.annotation.validity import Validation, dataset_kind
from gesturebench.runtime.errors import ConfigError
from gesturebench.runtime.weights import sha256_file

RULES_VERSION = "rules-v1"
THRESHOLDS = {
    "deictic_finger_change": 0.15,
    "iconic_height": 0.72,
    "iconic_path_length": 3.3,
    "metaphoric_hand_distance_change": 0.72,
    "none_path_length": 0.5,
}
#: `fit_to` value that fits to the dataset's own sem labels
SEM_LABELS = "beat2"
RULES_VALIDATION = Validation(
    "mini_beat2",
    "rules set on its generated gesture forms; all 200 events of its splits classified as their "
    "generated class (docs/annotation.md)",
    {"n": 200, "accuracy": 1.0},
)


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
    """Offline rules over motion features, or a linear model over them fitted to the dataset's sem
    labels (`fit_to=beat2`) or to another annotator's reference store."""

    offline = True

    def __init__(
        self,
        name: str = "kinematic",
        fit_to: str | None = None,
        fit_split: str = "train",
        check_split: str = "val",
        seed: int = 0,
        **annotator: Any,
    ):
        super().__init__(name, **annotator)
        if fit_to is not None and fit_split == check_split:
            raise ConfigError(
                f"annotator.fit_split and annotator.check_split must differ, both are {fit_split!r}"
            )
        self.fit_to = fit_to
        self.fit_split = fit_split
        self.check_split = check_split
        self.seed = int(seed)
        self.model: LinearModel | None = None
        #: the fit to sem labels, its file and where it was checked (`fit_to=beat2`)
        self.sem_fit: SemFit | None = None
        self.sem_fit_path: Path | None = None
        self.validations: tuple[Validation, ...] = () if fit_to else (RULES_VALIDATION,)

    @property
    def model_name(self) -> str:
        return f"logreg-fit-to-{self.fit_to}" if self.model is not None else RULES_VERSION

    def fingerprint(self) -> str:
        """Hash of the rule set (or of the fitted model): this backend's equivalent of a prompt
        hash."""
        if self.model is not None:
            return self.model.sha256()
        identity = json.dumps(
            {"version": RULES_VERSION, "thresholds": THRESHOLDS, "features": FEATURES},
            sort_keys=True,
        )
        return hashlib.sha256(identity.encode()).hexdigest()

    def describe(self) -> dict:
        return {
            **super().describe(),
            "fit_to": self.fit_to,
            "fit_split": self.fit_split,
            "check_split": self.check_split,
            "seed": self.seed,
        }

    def validated_on(self) -> tuple[Validation, ...]:
        return self.validations

    def provenance(self) -> dict:
        if self.sem_fit_path is None:
            return {}
        return {"path": str(self.sem_fit_path), "sha256": sha256_file(self.sem_fit_path)}

    def prepare(self, context: Any, store_root: Path) -> None:
        if self.fit_to is None or self.model is not None:
            return
        if self.fit_to == SEM_LABELS:
            self.fit_to_sem(context, store_root)
            return
        path = store_path(store_root, "reference", self.fit_to)
        if not path.is_file():
            raise ConfigError(
                f"annotator.fit_to={self.fit_to}: no reference annotations at {path}; create them "
                f"with `python launch.py task=annotate annotator={self.fit_to} "
                f"dataset.split={self.fit_split}`, fit to the dataset's own sem labels "
                f"(annotator.fit_to={SEM_LABELS}) or set annotator.fit_to=null for the rules"
            )
        features, labels = store_table(
            AnnotationStore(path), context.split(self.fit_split), context.body_model, self.context
        )
        self.fit(features, labels)

    def fit_to_sem(self, context: Any, store_root: Path) -> None:
        """Fit (or read from the dataset's cache) the model of the sem labels of `fit_split`,
        checked on `check_split`; valid on this dataset, with the check's agreement and, for each
        other annotator's reference store under `store_root`, the agreement with its classes on
        the check split's events."""
        splits = {s: context.split(s) for s in (self.fit_split, self.check_split)}
        folder = Path(context.cache_dir) / "annotators"
        fit, path = fit_sem(splits, context.body_model, self.context, self.seed, folder)
        self.sem_fit, self.sem_fit_path, self.model = fit, path, fit.model
        agreement = {
            **fit.agreement,
            "split": self.check_split,
            "fit_split": self.fit_split,
            "annotators": stores_agreement(fit, store_root, exclude=self.name),
        }
        evidence = (
            f"fitted to its sem labels on split {self.fit_split}; on split {self.check_split}: "
            f"accuracy {fit.agreement['accuracy']:.3g}, Cohen's kappa {fit.agreement['kappa']:.3g} "
            f"over {fit.agreement['n']} events"
        )
        self.validations = (Validation(dataset_kind(context), evidence, agreement),)

    def fit(self, features: np.ndarray, labels: list[str]) -> None:
        """Fit the model to a (N, len(FEATURES)) feature table and its classes."""
        self.model = fit_linear(features, labels, self.seed, str(self.fit_to))

    def ask(self, clip: EventClip) -> GestureAnswer:
        features = motion_features(clip.joints, clip.fps)
        if self.model is None:
            label, confidence = classify(features)
        else:
            proba = self.model.predict_proba(np.array([[features[n] for n in FEATURES]]))[0]
            best = int(np.argmax(proba))
            label, confidence = self.model.classes[best], float(proba[best])
        return GestureAnswer(
            word=clip.event.target,
            gesture_description=describe_motion(clip.joints, clip.fps, features),
            contextual_meaning="not assessed (the kinematic annotator sees motion only)",
            gesture_class=label,
            confidence=confidence,
        )


def stores_agreement(fit: SemFit, store_root: Path, exclude: str) -> dict[str, dict]:
    """Per annotator with a reference store under `store_root` (but `exclude`): the agreement
    (`class_agreement`, rows: the fitted model) of the fitted model's classes on the check split's
    events with the store's `ok` classes of the same events."""
    out = {}
    for path in sorted((Path(store_root) / "reference").glob("*.jsonl")):
        if path.stem == exclude:
            continue
        theirs = {
            rid: r.gesture_class
            for rid, r in AnnotationStore(path).latest().items()
            if r.status == "ok" and r.gesture_class is not None
        }
        shared = [(p, theirs[i]) for i, p in zip(fit.check_ids, fit.check_predicted) if i in theirs]
        out[path.stem] = class_agreement([p for p, _ in shared], [t for _, t in shared])
    return out
