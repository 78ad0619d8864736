"""Validation of annotations by people: a review sheet (CSV + static HTML with the clips), its
ingestion (percentage correct overall and per component), class agreement between two annotators
(Cohen's kappa and a confusion matrix, scikit-learn) and an annotator's agreement with human labels
(that, plus accuracy and per-class recall).

The sheet has one row per sampled record; a reviewer fills `correct_<component>` with 1/0 (also
accepted: y/n, yes/no, true/false, correct/incorrect; blank = not judged) and may give their own
class in `reviewer_class`, which is then compared with the annotator's class.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from gesturebench.annotation.schema import AnnotationRecord
from gesturebench.data.gesture_classes import GESTURE_CLASSES
from gesturebench.runtime.atomic import write_atomic
from gesturebench.runtime.errors import DataError

COMPONENTS = ("handedness", "hand_shape", "orientation", "location", "movement", "class", "meaning")
JUDGED = tuple(f"correct_{c}" for c in COMPONENTS)
INFO = (
    "event_id",
    "sequence_id",
    "start",
    "end",
    "clip",
    "word",
    "class",
    "confidence",
    "gesture_description",
    "contextual_meaning",
    "status",
)
_YES = {"1", "y", "yes", "true", "correct", "ok"}
_NO = {"0", "n", "no", "false", "incorrect", "wrong"}


def sample_records(
    records: Sequence[AnnotationRecord], n: int, seed: int
) -> list[AnnotationRecord]:
    """`n` records drawn without replacement (seeded), in (sequence, start) order."""
    rng = np.random.default_rng(seed)
    picked: np.ndarray | list[int] = (
        rng.choice(len(records), size=min(n, len(records)), replace=False) if records else []
    )
    return sorted((records[i] for i in picked), key=lambda r: (r.sequence_id, r.start))


def sheet_rows(records: Sequence[AnnotationRecord], clips: Sequence[str]) -> pd.DataFrame:
    """The review table: the annotation, its clip's relative path and empty judgement columns."""
    rows = []
    for record, clip in zip(records, clips):
        rows.append(
            {
                "event_id": record.event_id,
                "sequence_id": record.sequence_id,
                "start": record.start,
                "end": record.end,
                "clip": clip,
                "word": record.word,
                "class": record.gesture_class,
                "confidence": record.confidence,
                "gesture_description": record.gesture_description or record.raw,
                "contextual_meaning": record.contextual_meaning,
                "status": record.status,
                **{c: "" for c in JUDGED},
                "reviewer_class": "",
                "notes": "",
            }
        )
    return pd.DataFrame(rows, columns=[*INFO, *JUDGED, "reviewer_class", "notes"])


def write_review_sheet(folder: str | Path, table: pd.DataFrame, title: str) -> tuple[Path, Path]:
    """`review.csv` and `review.html` (each clip playable beside its annotation) in `folder`."""
    folder = Path(folder)
    csv_path, html_path = folder / "review.csv", folder / "review.html"
    write_atomic(csv_path, table.to_csv(index=False))
    cells = []
    for r in table.to_dict("records"):
        cells.append(
            "<tr><td><video controls width='320' src='{clip}'></video></td>"
            "<td>{seq}<br>{start:.2f}–{end:.2f} s<br><code>{eid}</code></td>"
            "<td><b>{word}</b></td><td><b>{cls}</b> ({conf})</td><td>{desc}</td>"
            "<td>{meaning}</td></tr>".format(
                clip=html.escape(str(r["clip"])),
                seq=html.escape(r["sequence_id"]),
                start=r["start"],
                end=r["end"],
                eid=r["event_id"],
                word=html.escape(str(r["word"])),
                cls=html.escape(str(r["class"])),
                conf=r["confidence"],
                desc=html.escape(str(r["gesture_description"])),
                meaning=html.escape(str(r["contextual_meaning"])),
            )
        )
    page = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        "<style>body{font-family:sans-serif}"
        "td{vertical-align:top;padding:6px;border-bottom:1px solid #ccc}"
        "</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p>Judge each component in <code>review.csv</code>: "
        f"{', '.join(JUDGED)} = 1 (correct) or 0 (incorrect), blank if not judged; "
        "optionally your own class in <code>reviewer_class</code>. "
        "Then run the same command with <code>task.filled=review.csv</code>.</p>"
        "<table><tr><th>clip</th><th>event</th><th>word</th><th>class</th>"
        "<th>gesture description</th>"
        f"<th>contextual meaning</th></tr>{''.join(cells)}</table></body></html>\n"
    )
    write_atomic(html_path, page)
    return csv_path, html_path


def read_review_sheet(path: str | Path) -> pd.DataFrame:
    """A filled sheet with its judgement columns as 1.0 / 0.0 / NaN; a value that is no judgement is
    a DataError."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "review sheet not found")
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise DataError(path, f"not a readable CSV ({exc})") from exc
    missing = [c for c in ("event_id", "class", *JUDGED) if c not in table.columns]
    if missing:
        raise DataError(
            path,
            f"missing column(s) {', '.join(missing)}; write a sheet with task=review first",
        )
    for column in JUDGED:
        values = table[column].str.strip().str.lower()
        bad = ~values.isin(_YES | _NO | {""})
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise DataError(
                path,
                f"row {row + 2}, column {column}: {table[column].iloc[row]!r} is not 1/0 "
                "(or yes/no, correct/incorrect, blank)",
            )
        table[column] = np.where(values.isin(_YES), 1.0, np.where(values.isin(_NO), 0.0, np.nan))
    return table


def review_scores(table: pd.DataFrame) -> dict:
    """Percentage correct overall (all judged cells), per component, and of fully correct
    annotations."""
    judged = table[list(JUDGED)]
    per_component = {
        c: (None if judged[j].count() == 0 else 100.0 * float(judged[j].mean()))
        for c, j in zip(COMPONENTS, JUDGED)
    }
    rows = judged.dropna(how="all")
    return {
        "reviewed": len(rows),
        "judgements": int(judged.count().sum()),
        "percent_correct": None if rows.empty else 100.0 * float(np.nanmean(judged.to_numpy())),
        "percent_fully_correct": None
        if rows.empty
        else 100.0 * float((rows.fillna(1.0) == 1.0).all(axis=1).mean()),
        "percent_correct_per_component": per_component,
    }


def class_agreement(a: Sequence[str], b: Sequence[str]) -> dict:
    """Cohen's kappa and the confusion matrix (rows: `a`, columns: `b`) of two annotators'
    classes."""
    if len(a) != len(b):
        raise ValueError("class_agreement needs two label lists of equal length")
    labels = [c for c in GESTURE_CLASSES if c in set(a) | set(b)]
    if not labels:
        return {"n": 0, "kappa": None, "percent_agreement": None, "labels": [], "confusion": []}
    kappa = cohen_kappa_score(a, b, labels=labels) if len(set(a) | set(b)) > 1 else 1.0
    return {
        "n": len(a),
        "kappa": float(kappa),
        "percent_agreement": 100.0 * float(np.mean(np.asarray(a) == np.asarray(b))),
        "labels": labels,
        "confusion": confusion_matrix(a, b, labels=labels).tolist(),
    }


def label_agreement(truth: Sequence[str], predicted: Sequence[str]) -> dict:
    """Agreement of `predicted` classes with human labels `truth`: `class_agreement`'s (rows of the
    confusion matrix: `truth`), the accuracy and each label's recall (None for a label no truth
    has)."""
    out = class_agreement(truth, predicted)
    confusion = np.asarray(out["confusion"], dtype=np.int64).reshape(len(out["labels"]), -1)
    per_truth = confusion.sum(axis=1)
    out["accuracy"] = float(np.trace(confusion) / len(truth)) if len(truth) else None
    out["recall"] = {
        label: None if n == 0 else float(confusion[i, i] / n)
        for i, (label, n) in enumerate(zip(out["labels"], per_truth))
    }
    return out
