"""The study's fixed vocabulary: conditions, perceptual dimensions, the composite predictors, the
rating scale."""

from __future__ import annotations

from typing import Literal

#: A perceptual dimension's short name (a key of `DIMENSIONS`).
Dimension = Literal["hl", "md", "ae", "st", "cm"]
#: A study condition (a key of `CONDITIONS`).
Condition = Literal["muted", "audio"]
#: Perceptual dimensions in the paper's order, with their full names (figure and table labels).
DIMENSIONS: dict[str, str] = {
    "hl": "Human-likeness",
    "md": "Motion diversity",
    "ae": "Absence of animation errors",
    "st": "Speech timing",
    "cm": "Content match",
}
#: Which dimensions each condition rates (different participants per condition).
CONDITIONS: dict[Condition, tuple[Dimension, ...]] = {
    "muted": ("hl", "md", "ae"),
    "audio": ("st", "cm"),
}
#: Columns of `task=render`'s manifest.csv, in order (the study server reads them by name).
MANIFEST_COLUMNS = (
    "stimulus_id",
    "source",
    "sequence_id",
    "start",
    "end",
    "condition",
    "file",
    "sha256",
)
#: The `dimension` value of an attention-check row (its outcome is in the `passed` column).
Attention = Literal["attention"]
ATTENTION: Attention = "attention"
#: Rating scale: 1 = very poor … 7 = excellent.
SCALE = (1, 7)
#: Columns of the long-format ratings file: `start` and `end` (seconds) are the rated window of the
#: sequence, as in the stimulus manifest.
COLUMNS = (
    "participant_id",
    "condition",
    "source",
    "sequence_id",
    "start",
    "end",
    "dimension",
    "rating",
    "passed",
)
#: Columns a ratings file may leave out: the window (then taken to be the configured one) and
#: `passed` (attention checks only).
OPTIONAL_COLUMNS = ("start", "end", "passed")
#: The 13 metrics of the paper's composite analysis (Chamfer excluded as redundant with Hausdorff).
PREDICTORS = (
    "fgd",
    "bc",
    "density",
    "coverage",
    "dice",
    "ldlj_rel",
    "srgr",
    "pck",
    "mjd",
    "hausdorff",
    "foot_contact",
    "sc",
    "sgp",
)
#: Display names of the metrics in tables and figures.
METRIC_LABELS = {
    "fgd": "FGD",
    "bc": "BC",
    "density": "Density",
    "coverage": "Coverage",
    "dice": "Dice",
    "ldlj_rel": "LDLJ_rel",
    "srgr": "SRGR",
    "pck": "PCK",
    "mjd": "MJD",
    "hausdorff": "Hausdorff",
    "foot_contact": "Foot contact",
    "sc": "SC",
    "sgp": "SGP",
    "chamfer": "Chamfer",
    "diversity": "Diversity",
}


def metric_label(name: str) -> str:
    return METRIC_LABELS.get(name, name)
