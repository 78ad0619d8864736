"""Pairwise studies: the comparisons file and its Bradley–Terry analysis on an Elo-style scale.

Model: source i beats source j with probability p_i / (p_i + p_j). A tie counts half a win for each
side; `prior` adds that many ties between every pair of sources (a weak pull towards equality that
keeps a source that never won finite). The maximum-likelihood strengths come from Hunter's (2004)
minorisation–maximisation iteration, normalised to a geometric mean of 1, and are reported as
Elo = base + 400·log10(p_i): 400 points is 10:1 odds, as on the GENEA Leaderboard. Confidence
intervals are percentile intervals over bootstrap resamples of the participants (kept ones only;
a participant failing `exclude_at` attention checks or more is excluded, as in rating studies).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from gesturebench.runtime.errors import DataError
from gesturebench.runtime.stages import track
from gesturebench.study.analysis import StudyStatistics
from gesturebench.study.schema import ATTENTION, DIMENSIONS

#: Columns of the pairwise file (`winner`: a, b or tie; `passed`: attention checks only).
PAIRWISE_COLUMNS = (
    "participant_id",
    "condition",
    "sequence_id",
    "dimension",
    "source_a",
    "source_b",
    "winner",
    "passed",
)
WINNERS = ("a", "b", "tie")


@dataclass(frozen=True)
class PairwiseOptions(StudyStatistics):
    """`study.analysis` of `study=pairwise`: `prior` ties added between every pair of sources,
    `elo_base` the Elo of a source of average strength."""

    prior: float = 0.5
    elo_base: float = 1000.0


def read_pairwise(path: str | Path) -> pd.DataFrame:
    """The pairwise file, validated: a bad row is a `DataError` naming its line."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "pairwise comparisons file not found")
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = [c for c in PAIRWISE_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise DataError(path, f"missing column(s) {', '.join(missing)}")
        rows = []
        for row in reader:
            where = f"line {reader.line_num}"
            if not row["participant_id"]:
                raise DataError(path, f"{where}: empty participant_id")
            if row["dimension"] == ATTENTION:
                if row["passed"] not in ("true", "false"):
                    raise DataError(path, f"{where}: attention check without passed true/false")
            elif row["dimension"] not in DIMENSIONS:
                raise DataError(path, f"{where}: unknown dimension {row['dimension']!r}")
            elif row["winner"] not in WINNERS:
                raise DataError(path, f"{where}: winner must be a, b or tie, got {row['winner']!r}")
            elif not row["source_a"] or row["source_a"] == row["source_b"]:
                raise DataError(path, f"{where}: a comparison needs two different sources")
            rows.append({c: row[c] for c in PAIRWISE_COLUMNS})
    frame = pd.DataFrame(rows, columns=list(PAIRWISE_COLUMNS))
    frame["passed"] = frame["passed"].map({"true": True, "false": False}).astype("boolean")
    return frame


def pairwise_csv(frame: pd.DataFrame) -> str:
    """A comparisons frame as the pairwise file's text (blanks for missing values)."""
    out = frame.loc[:, list(PAIRWISE_COLUMNS)].copy()
    out["passed"] = out["passed"].map({True: "true", False: "false"})
    return out.to_csv(index=False)


def win_matrix(frame: pd.DataFrame, sources: list[str]) -> np.ndarray:
    """W[i, j]: wins of source i over source j, a tie counting half for each."""
    index = {s: k for k, s in enumerate(sources)}
    wins = np.zeros((len(sources), len(sources)))
    for a, b, w in zip(frame["source_a"], frame["source_b"], frame["winner"]):
        i, j = index[a], index[b]
        wins[i, j] += {"a": 1.0, "b": 0.0, "tie": 0.5}[w]
        wins[j, i] += {"a": 0.0, "b": 1.0, "tie": 0.5}[w]
    return wins


def bradley_terry(wins: np.ndarray, prior: float = 0.0, tol: float = 1e-12) -> np.ndarray:
    """Maximum-likelihood log-strengths (mean 0) of the win matrix plus `prior` ties per pair."""
    w = wins + prior / 2 * (1 - np.eye(len(wins)))
    games = w + w.T
    total = w.sum(1)
    p = np.ones(len(w))
    for _ in range(100_000):
        denominator = (games / (p[:, None] + p[None, :])).sum(1)
        new = total / denominator
        new = new / np.exp(np.log(new).mean())
        if np.max(np.abs(new - p)) < tol:
            p = new
            break
        p = new
    return np.log(p)


def elo(log_strength: np.ndarray, base: float) -> np.ndarray:
    return base + 400.0 * log_strength / np.log(10.0)


def excluded_participants(frame: pd.DataFrame, exclude_at: int) -> set[str]:
    checks = frame[frame["dimension"] == ATTENTION]
    failed = (~checks["passed"].astype(bool)).groupby(checks["participant_id"]).sum()
    return set(failed[failed >= exclude_at].index)


def elo_table(frame: pd.DataFrame, options: PairwiseOptions) -> pd.DataFrame:
    """Per dimension and source: Elo score with its bootstrap interval, wins, losses, ties,
    comparisons, from the kept participants' comparisons."""
    kept = frame[~frame["participant_id"].isin(excluded_participants(frame, options.exclude_at))]
    kept = kept[kept["dimension"] != ATTENTION]
    rng = np.random.default_rng(options.seed)
    alpha = (1 - options.confidence) / 2
    rows = []
    for dimension in [d for d in DIMENSIONS if d in set(kept["dimension"])]:
        part = kept[kept["dimension"] == dimension]
        sources = sorted(set(part["source_a"]) | set(part["source_b"]))
        score = elo(bradley_terry(win_matrix(part, sources), options.prior), options.elo_base)
        people = part["participant_id"].unique()
        by_person = {p: g for p, g in part.groupby("participant_id")}
        draws = np.empty((options.bootstrap, len(sources)))
        for b in track(range(options.bootstrap), f"bootstrap {dimension}"):
            sample = pd.concat([by_person[p] for p in rng.choice(people, len(people))])
            draws[b] = elo(
                bradley_terry(win_matrix(sample, sources), options.prior), options.elo_base
            )
        low, high = np.quantile(draws, [alpha, 1 - alpha], axis=0)
        for k, s in enumerate(sources):
            as_a, as_b = part[part["source_a"] == s], part[part["source_b"] == s]
            wins = int((as_a["winner"] == "a").sum() + (as_b["winner"] == "b").sum())
            losses = int((as_a["winner"] == "b").sum() + (as_b["winner"] == "a").sum())
            ties = int((as_a["winner"] == "tie").sum() + (as_b["winner"] == "tie").sum())
            rows.append(
                {
                    "dimension": dimension,
                    "source": s,
                    "elo": float(score[k]),
                    "ci_low": float(low[k]),
                    "ci_high": float(high[k]),
                    "wins": wins,
                    "losses": losses,
                    "ties": ties,
                    "comparisons": wins + losses + ties,
                }
            )
    table = pd.DataFrame(rows)
    return table.sort_values(["dimension", "elo"], ascending=[True, False], kind="stable")
