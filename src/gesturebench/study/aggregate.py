"""Aggregation of kept ratings: per clip (source, sequence, dimension) and per source (Figure 2)."""

from __future__ import annotations

import pandas as pd

from gesturebench.study.schema import DIMENSIONS

CLIP = ["source", "sequence_id"]


def clip_ratings(ratings: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation (ddof 1) and count of the ratings of every (source, sequence,
    dimension)."""
    grouped = ratings.astype({"rating": float}).groupby([*CLIP, "dimension"], sort=True)["rating"]
    return grouped.agg(mean="mean", sd="std", n="count").reset_index()


def rating_matrix(clips: pd.DataFrame) -> pd.DataFrame:
    """Mean rating per clip: index (source, sequence_id), one column per dimension (NaN where
    unrated)."""
    wide = clips.pivot(index=CLIP, columns="dimension", values="mean")
    return wide.reindex(columns=[d for d in DIMENSIONS if d in wide.columns])


def source_means(clips: pd.DataFrame) -> pd.DataFrame:
    """Figure 2's numbers: per (source, dimension) the mean of the clip means and their
    between-sequence SD."""
    grouped = clips.groupby(["source", "dimension"], sort=False)["mean"]
    return grouped.agg(mean="mean", sd_between_sequences="std", sequences="count").reset_index()
