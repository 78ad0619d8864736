"""Quality control: attention checks per participant and the exclusion rule (≥ `exclude_at` failed
checks)."""

from __future__ import annotations

import pandas as pd

from gesturebench.study.schema import ATTENTION, CONDITIONS


def participant_qc(ratings: pd.DataFrame, exclude_at: int = 2) -> pd.DataFrame:
    """One row per participant: condition, ratings given, checks taken and failed, excluded, and
    why.

    A participant failing `exclude_at` or more attention checks is excluded (the paper: two or
    more).
    """
    checks = ratings[ratings["dimension"] == ATTENTION]
    given = ratings[ratings["dimension"] != ATTENTION]
    table = pd.DataFrame(
        {
            "condition": ratings.groupby("participant_id", sort=True)["condition"].first(),
            "ratings": given.groupby("participant_id").size(),
            "checks": checks.groupby("participant_id").size(),
            "failed": (~checks["passed"].astype(bool)).groupby(checks["participant_id"]).sum(),
        }
    )
    table[["ratings", "checks", "failed"]] = (
        table[["ratings", "checks", "failed"]].fillna(0).astype(int)
    )
    table["excluded"] = table["failed"] >= exclude_at
    table["reason"] = [
        f"failed {f} of {c} attention checks (>= {exclude_at})" if x else ""
        for f, c, x in zip(table["failed"], table["checks"], table["excluded"])
    ]
    return table.rename_axis("participant_id").reset_index()


def qc_summary(qc: pd.DataFrame) -> pd.DataFrame:
    """Per condition: participants recruited, excluded, kept, and ratings kept."""
    rows = []
    for condition in CONDITIONS:
        part = qc[qc["condition"] == condition]
        kept = part[~part["excluded"]]
        rows.append(
            {
                "condition": condition,
                "recruited": len(part),
                "excluded": int(part["excluded"].sum()),
                "kept": len(kept),
                "ratings_kept": int(kept["ratings"].sum()),
            }
        )
    return pd.DataFrame(rows)


def kept_ratings(ratings: pd.DataFrame, qc: pd.DataFrame) -> pd.DataFrame:
    """The rating rows (no attention checks) of the participants that were not excluded."""
    excluded = set(qc.loc[qc["excluded"], "participant_id"])
    keep = (ratings["dimension"] != ATTENTION) & ~ratings["participant_id"].isin(excluded)
    return ratings[keep].reset_index(drop=True)
