"""Spearman correlations with p-values (scipy), bootstrap confidence intervals, stars and
multiple-test correction."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, get_args

import numpy as np
import pandas as pd
from scipy import stats

#: the multiple-test corrections (`study.analysis.correction`)
Correction = Literal["holm", "bh"]
CORRECTIONS = get_args(Correction)


def stars(p: float) -> str:
    """The paper's significance stars: * p<.05, ** p<.01, *** p<.001."""
    if p is None or not np.isfinite(p):
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else ""


def holm(p: np.ndarray) -> np.ndarray:
    """Holm–Bonferroni adjusted p-values: step-down max of (m − i)·p_(i), capped at 1, in the input
    order."""
    p = np.asarray(p, dtype=float)
    order = np.argsort(p)
    m = len(p)
    adjusted = np.minimum(np.maximum.accumulate((m - np.arange(m)) * p[order]), 1.0)
    out = np.empty(m)
    out[order] = adjusted
    return out


def adjust(p: Iterable[float], method: str) -> np.ndarray:
    """Adjusted p-values (`holm`, or `bh` = Benjamini–Hochberg via scipy); NaNs stay NaN and are not
    counted."""
    p = np.asarray(list(p), dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        if method == "holm":
            out[ok] = holm(p[ok])
        elif method == "bh":
            out[ok] = stats.false_discovery_control(p[ok], method="bh")
        else:
            raise ValueError(f"correction must be one of {CORRECTIONS}, got {method!r}")
    return out


def spearman_rho(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Spearman's ρ along `axis` (Pearson correlation of average ranks), vectorised for
    resampling."""
    rx, ry = stats.rankdata(x, axis=axis), stats.rankdata(y, axis=axis)
    rx = rx - rx.mean(axis=axis, keepdims=True)
    ry = ry - ry.mean(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(axis) / np.sqrt((rx**2).sum(axis) * (ry**2).sum(axis))


def bootstrap_ci(
    x: np.ndarray, y: np.ndarray, n_resamples: int, confidence: float, rng: np.random.Generator
) -> tuple[float, float]:
    """Percentile bootstrap CI of Spearman's ρ over (x, y) pairs resampled together
    (scipy.stats.bootstrap)."""
    if n_resamples <= 0 or len(x) < 3:
        return float("nan"), float("nan")
    res = stats.bootstrap(
        (x, y),
        spearman_rho,
        paired=True,
        vectorized=True,
        n_resamples=n_resamples,
        confidence_level=confidence,
        method="percentile",
        random_state=rng,
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def spearman(
    x, y, n_resamples: int = 0, confidence: float = 0.95, rng: np.random.Generator | None = None
) -> dict:
    """ρ, p (scipy.stats.spearmanr), n and bootstrap CI of two columns over the rows where both are
    finite."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return {"n": len(x), "rho": np.nan, "p": np.nan, "ci_low": np.nan, "ci_high": np.nan}
    res = stats.spearmanr(x, y)
    low, high = bootstrap_ci(x, y, n_resamples, confidence, rng or np.random.default_rng(0))
    return {
        "n": len(x),
        "rho": float(res.statistic),
        "p": float(res.pvalue),
        "ci_low": low,
        "ci_high": high,
    }


def correlation_table(
    frame: pd.DataFrame,
    pairs: Iterable[tuple[str, str]],
    names: tuple[str, str],
    n_resamples: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per (a, b) column pair of `frame`: the two names, n, ρ, p, stars and the bootstrap
    CI."""
    rng = np.random.default_rng(seed)
    rows = []
    for a, b in pairs:
        r = spearman(frame[a], frame[b], n_resamples, confidence, rng)
        rows.append({names[0]: a, names[1]: b, **r, "stars": stars(r["p"])})
    columns = [*names, "n", "rho", "p", "stars", "ci_low", "ci_high"]
    return pd.DataFrame(rows, columns=columns)
