"""Paired comparisons of the models of a sweep on the same sequences (docs/statistics.md):
comparisons.csv and comparisons.md.

For each metric and each pair of models (a, b): the difference a − b, its bootstrap interval, a
two-sided p-value (never below the test's resolution), Holm-corrected across the metric's pairs,
and, for each configured metric's main value, a ranking in which models share a rank unless the
corrected test tells them apart; every job left out of a ranking is named with why.

- Per-sequence metrics (values in `per_sequence`): the differences a_s − b_s on the sequences both
  scored; the difference is their mean (each sequence one unit), the interval a percentile
  bootstrap of that mean, the p-value a paired sign-flip permutation test (under "no difference"
  each sequence's difference is as likely to have either sign), exact over all 2^n sign patterns
  where n is small.
- Distributional metrics (FGD, Density, Coverage: `replicates` in results.json): the jobs' bootstrap
  replicates come from the same resamples of the same sequences (drawn from `stats.seed` over the
  split indices), so a_b − b_b is a paired bootstrap over sequences; the difference is that of the
  reported values, the interval the percentiles of a_b − b_b and the p-value twice the smaller
  fraction of them on either side of 0, the observed difference counted as one of them.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from itertools import combinations, product
from pathlib import Path

import numpy as np
import pandas as pd

from gesturebench.reporting.results import OK, PAPER_METRICS
from gesturebench.runtime.atomic import write_atomic
from gesturebench.stats.bootstrap import Resamples, percentile_interval, weighted_means

#: Sign flips drawn for a permutation p-value when the 2^n patterns outnumber them (the smallest
#: p is then 1 / (PERMUTATIONS + 1)); with fewer sequences every pattern is enumerated.
PERMUTATIONS = 9999
#: The files `write_comparisons` writes.
COMPARISONS_CSV, COMPARISONS_MD = "comparisons.csv", "comparisons.md"
COLUMNS = [
    "metric", "a", "b", "difference", "lo", "hi", "p", "p_min", "p_holm", "test", "sequences",
]  # fmt: skip


def sign_patterns(n: int, permutations: int, seed: int) -> tuple[np.ndarray, bool]:
    """(patterns, exact): all 2^n sign patterns of n differences where they are at most
    `permutations` + 1, else `permutations` random ones."""
    if 2**n <= permutations + 1:
        return np.array(list(product((-1.0, 1.0), repeat=n))), True
    return np.random.default_rng(seed).choice((-1.0, 1.0), size=(permutations, n)), False


def sign_flip_p(differences: np.ndarray, permutations: int, seed: int) -> tuple[float, float]:
    """(p, smallest attainable p) of a two-sided paired sign-flip test of a zero mean of
    `differences` (n,): the fraction of sign patterns whose |mean| reaches the observed one. With
    n sequences and 2^n ≤ `permutations` + 1 every pattern is counted (exact; the observed pattern
    and its negation always reach it, so p ≥ 2/2^n); else random patterns counting the observed
    (Phipson & Smyth: p ≥ 1/(permutations + 1))."""
    n = len(differences)
    observed = abs(differences.mean())
    signs, exact = sign_patterns(n, permutations, seed)
    reach = int((np.abs(signs @ differences) / n >= observed * (1 - 1e-12)).sum())
    if exact:
        return reach / len(signs), 2 / len(signs)
    return (1 + reach) / (permutations + 1), 1 / (permutations + 1)


def bootstrap_p(replicates: np.ndarray) -> tuple[float, float]:
    """(p, smallest attainable p) of a zero difference from B paired bootstrap replicates: twice
    the smaller fraction on either side of 0, counting the observed difference as one replicate
    ((1 + k) / (B + 1)), at most 1; never below 2/(B + 1), the test's resolution."""
    finite = replicates[np.isfinite(replicates)]
    side = min((finite <= 0).sum(), (finite >= 0).sum())
    resolution = 2 / (finite.size + 1)
    return float(min(1.0, 2 * (1 + side) / (finite.size + 1))), resolution


def holm(p: list[float]) -> list[float]:
    """Holm's step-down adjustment of the p-values `p` (one family)."""
    order = np.argsort(p)
    adjusted = np.empty(len(p))
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        adjusted[i] = running
    return adjusted.tolist()


def shared_ranks(order: list[str], apart: dict[tuple[str, str], bool]) -> dict[str, int]:
    """Competition ranks of the models in `order` (best first): a model shares the rank of the
    first model of the current group unless the test tells them apart (`apart`, keyed either way
    round; a pair without a test is not told apart), else it ranks by its position."""
    ranks: dict[str, int] = {}
    leader = None
    for position, model in enumerate(order, start=1):
        if leader is not None and not apart.get((leader, model), apart.get((model, leader))):
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
    """(difference, lo, hi, p, p_min, test, sequences) of a − b on `metric`, None when not
    comparable."""
    va, vb = per_sequence_values(a, metric), per_sequence_values(b, metric)
    common = va.index.intersection(vb.index)
    if len(common) >= 2:
        d = (va[common] - vb[common]).to_numpy(dtype=float)
        counts = Resamples.draw(common.to_numpy(), bootstrap, seed).counts
        means = weighted_means(d[:, None], np.ones(len(d)), counts)[:, 0]
        interval = percentile_interval(means, confidence) or [np.nan, np.nan]
        p, p_min = sign_flip_p(d, PERMUTATIONS, seed)
        return float(d.mean()), *interval, p, p_min, "sign-flip", len(common)
    ra, rb = (np.asarray((r.get("replicates") or {}).get(metric, []), float) for r in (a, b))
    if ra.size and ra.size == rb.size and _same_sequences(a, b):
        diff = ra - rb
        paired = percentile_interval(diff, confidence)
        if paired is not None:
            value = a["metrics"][metric] - b["metrics"][metric]
            n = len(sequences(a))
            return value, *paired, *bootstrap_p(diff), "paired bootstrap", n
    return None


def _same_sequences(a: dict, b: dict) -> bool:
    """Whether two jobs scored the same split indices with the same bootstrap seed."""
    seeds = [row.get("config", {}).get("stats", {}).get("seed") for row in (a, b)]
    return sequences(a) == sequences(b) and seeds[0] == seeds[1]


def sequences(row: dict) -> list[int]:
    """The split indices a job scored (each once, however many samples per input)."""
    return sorted({r["index"] for r in row.get("per_sequence") or []})


def ranked_values(rows: list[dict]) -> list[str]:
    """The values a ranking orders: each configured metric's main value (results.json `options`
    keys), in the paper's order first; extras (reference-only values, counts, shares, variants)
    are diagnostics, compared but not ranked."""
    mains = [m for r in rows for m in (r.get("options") or {}) if m in (r.get("directions") or {})]
    return [m for m in PAPER_METRICS if m in mains] + sorted(set(mains) - set(PAPER_METRICS))


def unranked_reason(row: dict, metric: str, compared: bool) -> str | None:
    """Why a job is missing from `metric`'s ranking (None: it is ranked)."""
    if row["metrics"].get(metric) is None:
        return (row.get("skipped") or {}).get(metric, "no value")
    return None if compared else "no paired comparison (no sequence scored by it and another)"


def comparisons(rows: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame, list[tuple]]:
    """The pairwise comparisons (COLUMNS) of every value, the ranking (metric, rank, model,
    value) of the ranked values (`ranked_values`) and the (metric, model, reason) of each job left
    out of a ranking, over the successful jobs in `rows` that scored the same dataset; empty with
    fewer than two. Models share a rank unless their Holm-corrected p is below 1 − confidence."""
    ok = [r for r in rows if r["status"] == OK]
    datasets = {r.get("dataset") for r in ok}
    if len(ok) < 2 or len(datasets) != 1:
        empty = pd.DataFrame(columns=["metric", "rank", "model", "value"])
        return pd.DataFrame(columns=COLUMNS), empty, []
    names = labels(ok)
    stats = ok[0].get("config", {}).get("stats") or {}
    bootstrap, seed = int(stats.get("bootstrap") or 1000), int(stats.get("seed") or 0)
    confidence = float(stats.get("confidence") or 0.95)
    directions = {m: d for r in ok for m, d in (r.get("directions") or {}).items()}
    ranked = ranked_values(ok)
    records, ranking, left_out = [], [], []
    for metric in [*ranked, *(m for m in directions if m not in ranked)]:
        direction = directions[metric]
        values = {n: r["metrics"].get(metric) for n, r in zip(names, ok)}
        scored = [(n, r) for n, r in zip(names, ok) if values[n] is not None]
        family = []
        for (na, a), (nb, b) in combinations(scored, 2):
            result = compare_pair(a, b, metric, bootstrap, seed, confidence)
            if result is not None:
                family.append([metric, na, nb, *result[:5], None, *result[5:]])
        for record, adjusted in zip(family, holm([f[6] for f in family])):
            record[8] = max(adjusted, record[7])
        records += family
        if metric not in ranked:
            continue
        compared = {n for f in family for n in f[1:3]}
        for n, r in zip(names, ok):
            reason = unranked_reason(r, metric, n in compared)
            if reason is not None:
                left_out.append((metric, n, reason))
        apart = {(f[1], f[2]): f[8] < 1 - confidence for f in family}
        order = sorted(compared, key=lambda n: badness(values[n], direction))
        for model, rank in shared_ranks(order, apart).items():
            ranking.append({"metric": metric, "rank": rank, "model": model, "value": values[model]})
    return pd.DataFrame(records, columns=COLUMNS), pd.DataFrame(ranking), left_out


def p_text(p: float, p_min: float) -> str:
    """A p-value as Markdown shows it: ``≤ p_min`` at the test's resolution, the floor as its exact
    value (`exact_text`: 1/8 is ``≤ 0.125``, 2/1001 ``≤ 2/1001``), else 3 significant digits."""
    return f"≤ {exact_text(p_min)}" if p <= p_min * (1 + 1e-9) else f"{p:.3g}"


#: The largest denominator `exact_text` looks for: the floors are 2/2^n (n sequences, at most
#: 2^13 patterns), 1/(permutations + 1) and 2/(B + 1) for B bootstrap replicates.
MAX_DENOMINATOR = 10**7


def exact_text(value: float) -> str:
    """`value` exactly: as the decimal it is where it has one (a fraction whose denominator has
    no prime factor but 2 and 5: 0.125, 0.000244140625, 0.0001), else as ``n/d`` (2/1001), the
    fraction with the smallest denominator that is `value` as a float."""
    fraction = Fraction(value).limit_denominator(MAX_DENOMINATOR)
    if float(fraction) != value:
        return repr(value)
    denominator = fraction.denominator
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    if denominator != 1:
        return f"{fraction.numerator}/{fraction.denominator}"
    decimal = Decimal(fraction.numerator) / Decimal(fraction.denominator)
    return format(decimal, "f")


def ranking_lines(ranks: pd.DataFrame, left_out: list[tuple], metric: str) -> list[str]:
    """One line per rank of `metric` (models sharing it joined) and one per model left out."""
    lines = []
    for rank, group in ranks.groupby("rank", sort=True):
        models = ", ".join(f"{m} ({v:.4g})" for m, v in zip(group.model, group.value))
        lines.append(f"- rank {rank}: {models}")
    lines += [
        f"- not ranked: {m}, {' '.join(why.split())}" for k, m, why in left_out if k == metric
    ]
    return lines


def write_comparisons(sweep_dir: str | Path, rows: list[dict]) -> pd.DataFrame | None:
    """comparisons.csv (every pair of every value) and comparisons.md (the ranked values: ranking,
    models left out with why, then the pairs) in the sweep folder (nothing with fewer than two
    comparable jobs); returns the comparisons."""
    table, ranking, left_out = comparisons(rows)
    if table.empty:
        return None
    sweep_dir = Path(sweep_dir)
    write_atomic(sweep_dir / COMPARISONS_CSV, table.to_csv(index=False))
    parts = ["# Paired comparisons\n", _READING]
    for metric in ranking.metric.unique():
        pairs = table[table.metric == metric].drop(columns=["metric", "p_min"]).copy()
        shown = table[table.metric == metric]
        pairs["p"] = [p_text(p, m) for p, m in zip(shown.p, shown.p_min)]
        pairs["p_holm"] = [p_text(p, m) for p, m in zip(shown.p_holm, shown.p_min)]
        ranks = ranking[ranking.metric == metric]
        parts += [
            f"\n## {metric}\n",
            "\n".join(ranking_lines(ranks, left_out, metric)) + "\n",
            pairs.to_markdown(index=False, floatfmt=".4g") + "\n",
        ]
    write_atomic(sweep_dir / COMPARISONS_MD, "\n".join(parts))
    return table


_READING = (
    "Each configured metric's main value, best first; models share a rank unless their paired "
    "test, Holm-corrected over the metric's pairs, gives p_holm below 1 − confidence. "
    "difference = a − b (mean over sequences of a's minus b's value; for FGD, Density and Coverage "
    "the difference of the values), [lo, hi] its bootstrap interval over sequences, p two-sided "
    "(paired sign-flip test, exact with up to 13 sequences, or the paired bootstrap); `≤ x` is the "
    "test's smallest attainable p, as its exact value. Extras (reference-only values, counts, "
    "shares) are compared in comparisons.csv only (docs/statistics.md).\n"
)
