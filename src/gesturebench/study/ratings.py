"""The long-format ratings file (`study=csv`): reading, row validation with line numbers, and the
refusal rule.

One row per rating: ``participant_id, condition, source, sequence_id, start, end, dimension,
rating`` (1–7); ``start, end`` are the rated window of the sequence in seconds (optional columns: a
file without them is taken to rate the configured windows); attention checks are rows with
``dimension=attention`` and a boolean ``passed`` (their source, sequence and window may be blank).
A row is invalid when pydantic rejects it (unknown condition or dimension, a rating that is not an
integer from 1 to 7, a missing `passed`, a window without its start or end), when it names a source
or sequence the study does not have, when its dimension is not rated in its condition, or when its
participant already appeared in the other condition. Invalid rows are reported with their line
numbers (the header is line 1); the analysis refuses them unless dropped. Rated windows that differ
from the configured ones refuse the whole file (`rated_windows`): the ratings are then of other
stimuli than those the analysis would score.
"""

from __future__ import annotations

import csv
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import pandas as pd
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from gesturebench.runtime.atomic import write_atomic
from gesturebench.runtime.errors import DataError
from gesturebench.study.schema import (
    ATTENTION,
    COLUMNS,
    CONDITIONS,
    OPTIONAL_COLUMNS,
    SCALE,
    Attention,
    Condition,
    Dimension,
)

if TYPE_CHECKING:  # the server imports this module: no torch/Lightning at its start
    from gesturebench.study.windows import Window

REQUIRED_COLUMNS = tuple(c for c in COLUMNS if c not in OPTIONAL_COLUMNS)
#: Seconds by which a rated window's start or end may differ from the configured one (CSV rounding).
WINDOW_TOLERANCE = 1e-3
#: How many differing windows a refusal names.
NAMED_WINDOWS = 3
#: How many invalid rows a refusal message describes in full (all line numbers are always listed).
DESCRIBED_ROWS = 5


class RatingRow(BaseModel):
    """One row of the ratings file; `model_validate(row, context={"sources": …, "sequences": …})`
    checks it."""

    model_config = ConfigDict(str_strip_whitespace=True, extra="ignore")

    participant_id: str = Field(min_length=1)
    condition: Condition
    source: str = ""
    sequence_id: str = ""
    start: float | None = None
    end: float | None = None
    dimension: Literal[Dimension, Attention]
    rating: int | None = Field(default=None, ge=SCALE[0], le=SCALE[1])
    passed: bool | None = None

    @field_validator("rating", "passed", "start", "end", mode="before")
    @classmethod
    def _blank_is_none(cls, value):
        if isinstance(value, str) and not value.strip():
            return None
        if isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                return value
            return int(number) if number.is_integer() else value  # "4.0" is 4; "4.5" stays invalid
        return value

    @model_validator(mode="after")
    def _consistent(self, info: ValidationInfo) -> RatingRow:
        context = info.context or {}
        problems = []
        if (self.start is None) != (self.end is None):
            problems.append("a window needs both start and end (or neither)")
        elif self.start is not None and self.end is not None and self.end <= self.start:
            problems.append(f"window end {self.end:g} s is not after its start {self.start:g} s")
        if self.dimension == ATTENTION:
            if self.passed is None:
                problems.append("attention check without a 'passed' value (true/false)")
        else:
            if self.rating is None:
                problems.append("missing rating")
            if self.dimension not in CONDITIONS[self.condition]:
                problems.append(
                    f"dimension '{self.dimension}' is not rated in condition '{self.condition}' "
                    f"({self.condition} rates {', '.join(CONDITIONS[self.condition])})"
                )
        for column, known in (
            ("source", context.get("sources")),
            ("sequence_id", context.get("sequences")),
        ):
            value = getattr(self, column)
            needed = self.dimension != ATTENTION or value
            if known is not None and needed and value not in known:
                problems.append(
                    f"unknown {column.replace('_id', '')} '{value}' "
                    f"(known: {', '.join(sorted(known))})"
                )
        if problems:
            raise ValueError("; ".join(problems))
        return self


@dataclass
class Ratings:
    """A read ratings file: the valid rows (with their `line`) and the invalid ones as (line,
    reason)."""

    path: Path
    frame: pd.DataFrame
    invalid: list[tuple[int, str]] = field(default_factory=list)

    def invalid_table(self) -> pd.DataFrame:
        return pd.DataFrame(self.invalid, columns=["line", "reason"])


class RatingsError(DataError):
    """The ratings file has invalid rows and `study.drop_invalid` is false."""


def _reason(err: ValidationError) -> str:
    parts = []
    for e in err.errors():
        where = ".".join(str(x) for x in e["loc"])
        message = e["msg"].removeprefix("Value error, ")
        parts.append(f"{where}: {message} (got {e['input']!r})" if where else message)
    return "; ".join(parts)


def read_ratings(
    path: str | Path,
    sources: Collection[str] | None = None,
    sequences: Collection[str] | None = None,
) -> Ratings:
    """Read and validate a ratings CSV; `sources`/`sequences` (None: any) are the names the study
    knows."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "ratings file not found")
    context = {
        "sources": None if sources is None else set(sources),
        "sequences": None if sequences is None else set(sequences),
    }
    rows: list[dict] = []
    invalid: list[tuple[int, str]] = []
    condition_of: dict[str, tuple[Condition, int]] = {}
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise DataError(
                    path,
                    f"missing column(s) {', '.join(missing)}; a ratings file needs "
                    f"{', '.join(REQUIRED_COLUMNS)} (and may have start, end: the rated window; "
                    "passed: attention checks)",
                )
            for raw in reader:
                line = reader.line_num
                try:
                    row = RatingRow.model_validate(
                        {k: v or "" for k, v in raw.items() if k}, context=context
                    )
                except ValidationError as err:
                    invalid.append((line, _reason(err)))
                    continue
                first = condition_of.setdefault(row.participant_id, (row.condition, line))
                if first[0] != row.condition:
                    clash = (
                        f"participant '{row.participant_id}' already rated in condition "
                        f"'{first[0]}' (line {first[1]}); conditions have different participants"
                    )
                    invalid.append((line, clash))
                    continue
                rows.append({**row.model_dump(), "line": line})
    except (UnicodeDecodeError, csv.Error) as err:
        raise DataError(path, f"not a readable CSV file ({err})") from err
    frame = pd.DataFrame(rows, columns=[*COLUMNS, "line"])
    frame[["rating", "start", "end"]] = frame[["rating", "start", "end"]].astype("Float64")
    frame["passed"] = frame["passed"].astype("boolean")
    return Ratings(path, frame, invalid)


def require_valid(ratings: Ratings, drop_invalid: bool) -> pd.DataFrame:
    """The valid rows; with invalid rows present and `drop_invalid` false, a `RatingsError` listing
    their lines."""
    if ratings.invalid and not drop_invalid:
        lines = ", ".join(str(line) for line, _ in ratings.invalid)
        described = " | ".join(
            f"line {line}: {reason}" for line, reason in ratings.invalid[:DESCRIBED_ROWS]
        )
        more = (
            f" | … {len(ratings.invalid) - DESCRIBED_ROWS} more"
            if len(ratings.invalid) > DESCRIBED_ROWS
            else ""
        )
        raise RatingsError(
            ratings.path,
            f"{len(ratings.invalid)} invalid row(s) at line(s) {lines} ({described}{more}); "
            "fix them or set study.drop_invalid=true to analyse without them",
        )
    return ratings.frame


def ratings_csv(frame: pd.DataFrame) -> str:
    """A ratings frame as the file's text (the `COLUMNS`, blanks for missing values)."""
    out = frame.reindex(columns=list(COLUMNS))
    out["rating"] = out["rating"].astype("Int64")
    out["passed"] = out["passed"].map({True: "true", False: "false"})
    return out.to_csv(index=False)


def write_ratings(path: str | Path, frame: pd.DataFrame) -> None:
    """Write a ratings frame in the file format, atomically."""
    write_atomic(path, ratings_csv(frame))


def rated_windows(path: str | Path, frame: pd.DataFrame, configured: list[Window]) -> list[Window]:
    """The configured windows that valid rating rows (`frame`) rate, in configured order.

    Rows naming a window (start, end) must name their sequence's configured window: otherwise the
    ratings are of other stimuli than those the analysis scores, and the file is refused with a
    `DataError` naming up to `NAMED_WINDOWS` of the differing windows."""
    by_id = {w.sequence_id: w for w in configured}
    rated = frame[(frame["dimension"] != ATTENTION) & frame["sequence_id"].isin(list(by_id))]
    given = rated.dropna(subset=["start", "end"]).drop_duplicates(["sequence_id", "start", "end"])
    differ = [
        f"{r.sequence_id} rated on [{r.start:g}, {r.end:g}] s, configured "
        f"[{by_id[r.sequence_id].start:g}, {by_id[r.sequence_id].end:g}] s"
        for r in given.itertuples()
        if abs(r.start - by_id[r.sequence_id].start) > WINDOW_TOLERANCE
        or abs(r.end - by_id[r.sequence_id].end) > WINDOW_TOLERANCE
    ]
    if differ:
        more = f" and {len(differ) - NAMED_WINDOWS} more" if len(differ) > NAMED_WINDOWS else ""
        raise DataError(
            path,
            f"the rated windows differ from the configured study windows: "
            f"{'; '.join(differ[:NAMED_WINDOWS])}{more}; configure the rated ones "
            "(study.windows.file=<task=render's stimuli folder>/windows.csv)",
        )
    sequences = set(rated["sequence_id"])
    return [w for w in configured if w.sequence_id in sequences]
