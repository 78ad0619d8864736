"""The long-format ratings file (`study=csv`): reading, row validation with line numbers, and the
refusal rule.

One row per rating: ``participant_id, condition, source, sequence_id, dimension, rating`` (1–7);
attention checks are rows with ``dimension=attention`` and a boolean ``passed`` (their source and
sequence may be blank). A row is invalid when pydantic rejects it (unknown condition or dimension, a
rating that is not an integer from 1 to 7, a missing `passed`), when it names a source or sequence
the study does not have, when its dimension is not rated in its condition, or when its participant
already appeared in the other condition. Invalid rows are reported with their line numbers (the
header is line 1); the analysis refuses them unless dropped.
"""

from __future__ import annotations

import csv
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

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

from gesturebench.atomic import write_atomic
from gesturebench.errors import DataError
from gesturebench.study.schema import (
    ATTENTION,
    COLUMNS,
    CONDITIONS,
    SCALE,
    Attention,
    Condition,
    Dimension,
)

REQUIRED_COLUMNS = COLUMNS[:-1]
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
    dimension: Literal[Dimension, Attention]
    rating: int | None = Field(default=None, ge=SCALE[0], le=SCALE[1])
    passed: bool | None = None

    @field_validator("rating", "passed", mode="before")
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
                    f"{', '.join(COLUMNS)} ('passed' only for attention checks)",
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
    frame["rating"] = frame["rating"].astype("Float64")
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
    out = frame.loc[:, list(COLUMNS)].copy()
    out["rating"] = out["rating"].astype("Int64")
    out["passed"] = out["passed"].map({True: "true", False: "false"})
    return out.to_csv(index=False)


def write_ratings(path: str | Path, frame: pd.DataFrame) -> None:
    """Write a ratings frame in the file format, atomically."""
    write_atomic(path, ratings_csv(frame))
