"""Paired comparisons of the models of a sweep on the same sequences (docs/statistics.md):
comparisons.csv and comparisons.md.

For each metric and each pair of models (a, b): the difference a − b, its bootstrap interval, a
two-sided p-value, Holm-corrected across the metric's pairs, and a ranking in which models whose
difference interval includes 0 share a rank.

- Per-sequence metrics (values in `per_sequence`): the differences a_s − b_s on the sequences both
  scored; the difference is their mean (each sequence one unit), the interval a percentile
  bootstrap of that mean, the p-value a paired sign-flip permutation test (under "no difference"
  each sequence's difference is as likely to have either sign).
- Distributional metrics (FGD, Density, Coverage: `replicates` in results.json): the jobs' bootstrap
  replicates come from the same resamples of the same sequences (drawn from `stats.seed` over the
  split indices), so a_b − b_b is a paired bootstrap over sequences; the difference is that of the
  reported values, the interval the percentiles of a_b − b_b and the p-value twice the smaller
  fraction of them on either side of 0.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from gesturebench.atomic import write_atomic
from gesturebench.stats.bootstrap import Resamples, percentile_interval, weighted_means

#: Sign flips drawn for a permutation p-value (its smallest value is 1 / (PERMUTATIONS + 1)).
PERMUTATIONS = 9999
COLUMNS = ["metric", "a", "b", "difference", "lo", "hi", "p", "p_holm", "test", "sequences"]


def sign_flip_p(differences: np.ndarray, permutations: int, seed: int) -> float:
    """Two-sided p-value of a zero mean of paired `differences` (n,): the fraction of random sign
    flips whose |mean| reaches the observed one, counting the observed (Phipson & Smyth)."""
    observed = abs(differences.mean())
    rng = np.random.default_rng(seed)
    signs = rng.choice((-1.0, 1.0), size=(permutations, len(differences)))
    flipped = np.abs(signs @ differences) / len(differences)
    return float((1 + (flipped >= observed * (1 - 1e-12)).sum()) / (permutations + 1))


def bootstrap_p(replicates: np.ndarray) -> float:
    """Two-sided p-value of a zero difference from its paired bootstrap replicates: twice the
    smaller fraction on either side of 0 (at most 1)."""
    finite = replicates[np.isfinite(replicates)]
    side = min((finite <= 0).mean(), (finite >= 0).mean())
    return float(min(1.0, 2 * side))


def holm(p: list[float]) -> list[float]:
    """Holm's step-down adjustment of the p-values `p` (one family)."""
    order = np.argsort(p)
    adjusted = np.empty(len(p))
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        adjusted[i] = running
    return adjusted.tolist()


def shared_ranks(order: list[str], overlaps: dict[tuple[str, str], bool]) -> dict[str, int]:
    """Competition ranks of the models in `order` (best first): a model shares the rank of the
    first model of the current group when their difference interval includes 0 (`overlaps`, keyed
    either way round), else it ranks by its position."""
    ranks: dict[str, int] = {}
    leader = None
    for position, model in enumerate(order, start=1):
        if leader is not None and overlaps.get((leader, model), overlaps.get((model, leader))):
            ranks[model] = ranks[leader]
        else:
            leader, ranks[model] = model, position
    return ranks


def badness(value: float, direction: str) -> float:
    """What ranking sorts on, smallest first: the value ("lower"), its negative ("higher") or its
    magnitude ("zero")."""
    return {"lower": value, "higher": -value}.get(direction, abs(value))


def labels(rows: list[dict]) -> list[str]:
    """Each job's model name, with the job's folder where two jobs share a model name."""
    names = [r.get("model") or r["job"] for r in rows]
    return [n if names.count(n) == 1 else f"{n} ({r['job']})" for n, r in zip(names, rows)]


def per_sequence_values(row: dict, metric: str) -> pd.Series:
    """A job's finite per-sequence values of `metric`, indexed by split index (with several
    samples per input, their mean)."""
    table = pd.DataFrame(row.get("per_sequence") or [])
    if metric not in table.columns:
        return pd.Series(dtype=float)
    return table.groupby("index")[metric].mean().dropna()


def compare_pair(a: dict, b: dict, metric: str, bootstrap: int, seed: int, confidence: float):
    """(difference, lo, hi, p, test, sequences) of a − b on `metric`, None when not comparable."""
    va, vb = per_sequence_values(a, metric), per_sequence_values(b, metric)
    common = va.index.intersection(vb.index)
    if len(common) >= 2:
        d = (va[common] - vb[common]).to_numpy(dtype=float)
        counts = Resamples.draw(common.to_numpy(), bootstrap, seed).counts
        means = weighted_means(d[:, None], np.ones(len(d)), counts)[:, 0]
        interval = percentile_interval(means, confidence) or [np.nan, np.nan]
        p = sign_flip_p(d, PERMUTATIONS, seed)
        return float(d.mean()), *interval, p, "sign-flip", len(common)
    ra, rb = (np.asarray((r.get("replicates") or {}).get(metric, []), float) for r in (a, b))
    if ra.size and ra.size == rb.size and _same_sequences(a, b):
        diff = ra - rb
        paired = percentile_interval(diff, confidence)
        if paired is not None:
            value = a["metrics"][metric] - b["metrics"][metric]
            n = len(sequences(a))
            return value, *paired, bootstrap_p(diff), "paired bootstrap", n
    return None


def _same_sequences(a: dict, b: dict) -> bool:
    """Whether two jobs scored the same split indices with the same bootstrap seed."""
    seeds = [row.get("config", {}).get("stats", {}).get("seed") for row in (a, b)]
    return sequences(a) == sequences(b) and seeds[0] == seeds[1]


def sequences(row: dict) -> list[int]:
    """The split indices a job scored (each once, however many samples per input)."""
    return sorted({r["index"] for r in row.get("per_sequence") or []})


def comparisons(rows: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The pairwise comparisons (COLUMNS) and the ranking (metric, rank, model, value) of the
    successful jobs in `rows` that scored the same dataset; empty with fewer than two."""
    ok = [r for r in rows if r["status"] == "ok"]
    datasets = {r.get("dataset") for r in ok}
    if len(ok) < 2 or len(datasets) != 1:
        return pd.DataFrame(columns=COLUMNS), pd.DataFrame(columns=["metric", "rank", "model"])
    names = labels(ok)
    stats = ok[0].get("config", {}).get("stats") or {}
    bootstrap, seed = int(stats.get("bootstrap") or 1000), int(stats.get("seed") or 0)
    confidence = float(stats.get("confidence") or 0.95)
    directions = {m: d for r in ok for m, d in (r.get("directions") or {}).items()}
    records, ranking = [], []
    for metric, direction in directions.items():
        values = {n: r["metrics"].get(metric) for n, r in zip(names, ok)}
        scored = [(n, r) for n, r in zip(names, ok) if values[n] is not None]
        family = []
        for (na, a), (nb, b) in combinations(scored, 2):
            result = compare_pair(a, b, metric, bootstrap, seed, confidence)
            if result is not None:
                family.append([metric, na, nb, *result[:4], None, *result[4:]])
        for record, adjusted in zip(family, holm([f[6] for f in family])):
            record[7] = adjusted
        records += family
        overlaps = {(f[1], f[2]): bool(f[4] <= 0 <= f[5]) for f in family}
        order = sorted((n for n, _ in scored), key=lambda n: badness(values[n], direction))
        for model, rank in shared_ranks(order, overlaps).items():
            ranking.append({"metric": metric, "rank": rank, "model": model, "value": values[model]})
    return pd.DataFrame(records, columns=COLUMNS), pd.DataFrame(ranking)


def write_comparisons(sweep_dir: str | Path, rows: list[dict]) -> pd.DataFrame | None:
    """comparisons.csv and comparisons.md in the sweep folder (nothing with fewer than two
    comparable jobs); returns the comparisons."""
    table, ranking = comparisons(rows)
    if table.empty:
        return None
    sweep_dir = Path(sweep_dir)
    write_atomic(sweep_dir / "comparisons.csv", table.to_csv(index=False))
    parts = ["# Paired comparisons\n", _READING]
    for metric, pairs in table.groupby("metric", sort=False):
        ranks = ranking[ranking.metric == metric].drop(columns="metric")
        parts += [
            f"\n## {metric}\n",
            ranks.to_markdown(index=False, floatfmt=".4g") + "\n",
            pairs.drop(columns="metric").to_markdown(index=False, floatfmt=".4g") + "\n",
        ]
    write_atomic(sweep_dir / "comparisons.md", "\n".join(parts))
    return table


_READING = (
    "difference = a − b (mean over sequences of a's minus b's value; for FGD, Density and Coverage "
    "the difference of the values), [lo, hi] its bootstrap interval over sequences, p two-sided "
    "(paired sign-flip permutation test, or the paired bootstrap), p_holm Holm-corrected over the "
    "metric's pairs. Models whose difference interval includes 0 share a rank "
    "(docs/statistics.md).\n"
)
