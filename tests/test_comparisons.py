"""Paired comparisons of a sweep's models (reporting/comparisons.py): the sign-flip test's size and
power, Holm's adjustment and shared ranks by hand, the paired bootstrap of distributional metrics,
and the end-to-end sweep's comparisons.md."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from gesturebench.reporting.comparisons import (
    PERMUTATIONS,
    bootstrap_p,
    comparisons,
    holm,
    p_text,
    shared_ranks,
    sign_flip_p,
    write_comparisons,
)


def test_sign_flip_p_is_uniform_for_two_copies_of_the_same_model():
    """200 seeded draws of two exchangeable models on 40 sequences (a shared per-sequence
    difficulty plus each model's own noise): p < 0.05 in 2–8 % of them."""
    rng = np.random.default_rng(0)
    below = 0
    for draw in range(200):
        difficulty = rng.gamma(2.0, 1.0, 40)
        a, b = difficulty + rng.normal(0, 0.3, 40), difficulty + rng.normal(0, 0.3, 40)
        below += sign_flip_p(a - b, 999, seed=draw)[0] < 0.05
    assert 0.02 <= below / 200 <= 0.08


def test_sign_flip_detects_a_known_shift_and_equals_the_exact_test():
    rng = np.random.default_rng(1)
    d = rng.normal(0.3, 0.3, 40)  # a model worse by 0.3 on every sequence, noise 0.3
    assert sign_flip_p(d, 9999, seed=0)[0] < 0.001
    # all 2^n sign patterns of a small sample, counted by hand: |mean| ≥ observed
    small = np.array([1.0, 2.0, -0.5, 3.0])
    patterns = np.array(np.meshgrid(*[[-1, 1]] * 4)).reshape(4, -1).T
    exact = (np.abs(patterns @ small) >= abs(small.sum())).mean()
    assert sign_flip_p(small, 9999, seed=0) == (pytest.approx(exact), 2 / 16)


def test_sign_flip_on_four_sequences_is_exact_and_never_below_two_sixteenths():
    """[1, 2, 3, 4]: only the observed pattern and its negation reach |sum| 10, p = 2/16 by hand;
    scipy's exact paired permutation test agrees on 4 and on 9 sequences."""
    assert sign_flip_p(np.array([1.0, 2.0, 3.0, 4.0]), 9999, seed=0) == (0.125, 0.125)
    rng = np.random.default_rng(4)
    for n in (4, 9):
        d = rng.normal(0.5, 1.0, n)
        ref = scipy.stats.permutation_test(
            (d,), np.mean, permutation_type="samples", n_resamples=np.inf
        )
        assert sign_flip_p(d, 9999, seed=0)[0] == pytest.approx(ref.pvalue)
    assert sign_flip_p(rng.normal(5, 1, 20), 999, seed=0) == (0.001, 0.001)


def test_bootstrap_p_never_below_its_resolution():
    """All 199 replicates below 0: p = 2·(1 + 0)/200, the smallest the test can say."""
    assert bootstrap_p(np.full(199, -1.0)) == (0.01, 0.01)
    assert bootstrap_p(np.array([-1.0, 1.0, 2.0, 3.0]))[0] == pytest.approx(2 * 2 / 5)


def test_holm_hand_worked():
    # sorted 0.01, 0.02, 0.04 → 3·0.01, max(0.03, 2·0.02), max(0.04, 1·0.04)
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])


def test_shared_ranks_follow_the_leader_of_each_group():
    apart = {("a", "b"): False, ("a", "c"): True, ("c", "b"): False, ("c", "d"): False}
    assert shared_ranks(["a", "b", "c", "d"], apart) == {"a": 1, "b": 1, "c": 3, "d": 3}
    assert shared_ranks(["a", "b"], {}) == {"a": 1, "b": 1}  # no test: not told apart


def job(name: str, per_sequence: dict[str, list[float]], replicates: dict | None = None) -> dict:
    n = len(next(iter(per_sequence.values())))
    rows = [{"index": i, **{m: v[i] for m, v in per_sequence.items()}} for i in range(n)]
    metrics = {m: float(np.mean(v)) for m, v in per_sequence.items()}
    metrics.update({m: float(np.median(r)) for m, r in (replicates or {}).items()})
    return {
        "job": name,
        "status": "ok",
        "model": name,
        "dataset": "d",
        "metrics": metrics,
        "directions": {"mjd": "lower", "fgd": "lower"},
        "options": {"mjd": {}, "fgd": {}},
        "per_sequence": rows,
        "replicates": replicates or {},
        "config": {"stats": {"bootstrap": 500, "seed": 0, "confidence": 0.95}},
    }


def test_comparisons_table_ranking_and_paired_bootstrap(tmp_path):
    rng = np.random.default_rng(2)
    base = rng.gamma(2.0, 1.0, 30)
    shared = rng.normal(size=200)  # the same resamples: replicates move together
    rows = [
        job("good", {"mjd": list(base)}, {"fgd": list(1.0 + 0.1 * shared)}),
        job(
            "twin",
            {"mjd": list(base + np.repeat(rng.normal(0, 0.01, 15), 2) * np.tile([1, -1], 15))},
            {"fgd": list(1.0 + 0.1 * shared + rng.normal(0, 0.01, 200))},
        ),
        job("bad", {"mjd": list(base + 1.0)}, {"fgd": list(2.0 + 0.1 * shared)}),
    ]
    table, ranking, _ = comparisons(rows)
    mjd = table[table.metric == "mjd"].set_index(["a", "b"])
    assert mjd.loc[("good", "bad"), "difference"] == pytest.approx(-1.0)
    assert mjd.loc[("good", "bad"), "hi"] < 0 and mjd.loc[("good", "bad"), "p_holm"] < 0.01
    assert mjd.loc[("good", "twin"), "lo"] < 0 < mjd.loc[("good", "twin"), "hi"]
    fgd = table[table.metric == "fgd"].set_index(["a", "b"])
    assert set(fgd.test) == {"paired bootstrap"}
    # the paired interval is that of the replicate differences: −1 ± the small noise
    assert fgd.loc[("good", "bad"), ["lo", "hi"]].tolist() == pytest.approx([-1.0, -1.0])
    ranks = ranking.set_index(["metric", "model"])["rank"]
    assert ranks[("fgd", "bad")] == 3 and ranks[("mjd", "bad")] == 3
    assert {ranks[("fgd", "good")], ranks[("fgd", "twin")]} == {1}
    write_comparisons(tmp_path, rows)
    assert set(pd.read_csv(tmp_path / "comparisons.csv").columns) >= {"p_holm", "lo", "hi"}
    assert "## fgd" in (tmp_path / "comparisons.md").read_text()


@pytest.mark.slow
def test_sweep_writes_comparisons_with_ground_truth_first(basic_sweep):
    """`-m model=ground_truth,mean_pose,random_clip` on 2 sequences (conftest's sweep):
    comparisons.md lists ground truth first on MJD and PCK, every difference to it has an interval
    excluding 0, yet with 2 sequences no test can tell models apart (p ≥ 2/2² = 0.5): all share
    rank 1; reference-only values are not ranked."""
    sweep, proc = basic_sweep
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = (sweep / "comparisons.md").read_text()
    assert text.index("## mjd") < text.index("## pck") and "## diversity_ref" not in text
    table = pd.read_csv(sweep / "comparisons.csv")
    assert (table.p >= table.p_min).all() and "diversity_ref" in set(table.metric)
    for metric in ("mjd", "pck"):
        pairs = table[(table.metric == metric) & (table.a == "ground_truth")]
        assert len(pairs) == 2 and ((pairs.hi < 0) | (pairs.lo > 0)).all(), metric
        assert (pairs.p == 0.5).all()
        section = [line for line in text.split(f"## {metric}\n")[1].splitlines() if line]
        assert section[0].startswith("- rank 1: ground_truth (") and section[1].startswith("| a")


def test_four_sequences_share_ranks_and_every_left_out_model_is_named(tmp_path):
    """4 sequences, one model worse by 1 on each: its sign-flip p is 2/16, Holm 0.25 — not told
    apart, both rank 1; a model whose value was skipped is named with its reason; a reference-only
    extra is compared in the CSV but not ranked; the paper's metrics lead the file."""
    good = job("good", {"mjd": [1.0, 2.0, 3.0, 4.0], "diversity_ref": [1.0] * 4})
    bad = job("bad", {"mjd": [2.0, 3.0, 4.0, 5.0], "diversity_ref": [1.0] * 4})
    still = job("still", {"mjd": [0.0] * 4, "diversity_ref": [1.0] * 4})
    still["metrics"]["mjd"] = None
    still["skipped"] = {"mjd": "motionless"}
    for row in (good, bad, still):
        row["directions"] = {"ldlj_rel": "zero", "mjd": "lower", "diversity_ref": "higher"}
        row["options"] = {"mjd": {}, "ldlj_rel": {}}
    bad["metrics"]["ldlj_rel"], good["metrics"]["ldlj_rel"] = 0.5, -0.1
    for row, v in ((good, [0.0, -0.1, -0.2, 0.0]), (bad, [0.5] * 4), (still, [1.0] * 4)):
        for r, x in zip(row["per_sequence"], v):
            r["ldlj_rel"] = x
    still["metrics"]["ldlj_rel"] = 1.0
    table, ranking, left_out = comparisons([good, bad, still])
    mjd = table[table.metric == "mjd"].set_index(["a", "b"])
    assert mjd.loc[("good", "bad"), ["p", "p_min", "p_holm"]].tolist() == [0.125, 0.125, 0.125]
    assert set(ranking[ranking.metric == "mjd"].itertuples(index=False, name=None)) == {
        ("mjd", 1, "good", 2.5),
        ("mjd", 1, "bad", 3.5),
    }
    assert left_out == [("mjd", "still", "motionless")]
    assert "diversity_ref" not in set(ranking.metric) and "diversity_ref" in set(table.metric)
    write_comparisons(tmp_path, [good, bad, still])
    text = (tmp_path / "comparisons.md").read_text()
    assert text.index("## mjd") < text.index("## ldlj_rel") and "## diversity_ref" not in text
    assert "- rank 1: good (2.5), bad (3.5)\n- not ranked: still, motionless" in text
    assert "| ≤ 0.125 |" in text and "| 0 |" not in text  # 2/16 exactly, not 0.12


def test_a_p_value_floor_is_printed_as_its_exact_value():
    """Each kind of floor, read back from its text, is the floor itself: 2/2^n of an exact
    sign-flip test (a finite decimal, however many digits), 1/(permutations + 1), and 2/(B + 1) of
    the bootstrap (no finite decimal: a fraction); a p above its floor keeps 3 digits."""
    floors = [2 / 2**n for n in range(1, 14)] + [1 / (PERMUTATIONS + 1)]
    floors += [bootstrap_p(np.arange(1.0, b + 1))[1] for b in (99, 1000, 1999)]
    for floor in floors:
        text = p_text(floor, floor)
        assert text.startswith("≤ ")
        shown = text[2:]
        exact = Fraction(shown) if "/" in shown else Fraction(Decimal(shown))
        assert float(exact) == floor, (floor, text)
    assert p_text(1 / 8, 1 / 8) == "≤ 0.125"  # not "≤ 0.12"
    assert p_text(2 / 1001, 2 / 1001) == "≤ 2/1001"
    assert p_text(2 / 2**13, 2 / 2**13) == "≤ 0.000244140625"
    assert p_text(0.123456, 0.125 / 4) == "0.123"
