"""Paired comparisons of a sweep's models (stats/comparisons.py): the sign-flip test's size and
power, Holm's adjustment and shared ranks by hand, the paired bootstrap of distributional metrics,
and the end-to-end sweep's comparisons.md."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from gesturebench.stats.comparisons import (
    bootstrap_p,
    comparisons,
    holm,
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
        below += sign_flip_p(a - b, 999, seed=draw) < 0.05
    assert 0.02 <= below / 200 <= 0.08


def test_sign_flip_detects_a_known_shift_and_equals_the_exact_test():
    rng = np.random.default_rng(1)
    d = rng.normal(0.3, 0.3, 40)  # a model worse by 0.3 on every sequence, noise 0.3
    assert sign_flip_p(d, 9999, seed=0) < 0.001
    # all 2^n sign patterns of a small sample, counted by hand: |mean| ≥ observed
    small = np.array([1.0, 2.0, -0.5, 3.0])
    patterns = np.array(np.meshgrid(*[[-1, 1]] * 4)).reshape(4, -1).T
    exact = (np.abs(patterns @ small) >= abs(small.sum())).mean()
    assert sign_flip_p(small, 200000, seed=0) == pytest.approx(exact, abs=0.005)


def test_holm_hand_worked():
    # sorted 0.01, 0.02, 0.04 → 3·0.01, max(0.03, 2·0.02), max(0.04, 1·0.04)
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])


def test_shared_ranks_follow_the_leader_of_each_group():
    overlaps = {("a", "b"): True, ("a", "c"): False, ("c", "b"): True, ("c", "d"): True}
    assert shared_ranks(["a", "b", "c", "d"], overlaps) == {"a": 1, "b": 1, "c": 3, "d": 3}


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
    table, ranking = comparisons(rows)
    mjd = table[table.metric == "mjd"].set_index(["a", "b"])
    assert mjd.loc[("good", "bad"), "difference"] == pytest.approx(-1.0)
    assert mjd.loc[("good", "bad"), "hi"] < 0 and mjd.loc[("good", "bad"), "p_holm"] < 0.01
    assert mjd.loc[("good", "twin"), "lo"] < 0 < mjd.loc[("good", "twin"), "hi"]
    fgd = table[table.metric == "fgd"].set_index(["a", "b"])
    assert set(fgd.test) == {"paired bootstrap"}
    # the paired interval is that of the replicate differences: −1 ± the small noise
    assert fgd.loc[("good", "bad"), ["lo", "hi"]].tolist() == pytest.approx([-1.0, -1.0])
    assert bootstrap_p(np.full(200, -1.0)) == 0.0
    ranks = ranking.set_index(["metric", "model"])["rank"]
    assert ranks[("fgd", "bad")] == 3 and ranks[("mjd", "bad")] == 3
    assert {ranks[("fgd", "good")], ranks[("fgd", "twin")]} == {1}
    write_comparisons(tmp_path, rows)
    assert set(pd.read_csv(tmp_path / "comparisons.csv").columns) >= {"p_holm", "lo", "hi"}
    assert "## fgd" in (tmp_path / "comparisons.md").read_text()


@pytest.mark.slow
def test_sweep_writes_comparisons_with_ground_truth_first(basic_sweep):
    """`-m model=ground_truth,mean_pose,random_clip` (conftest's sweep): comparisons.md ranks
    ground truth first on MJD and PCK, alone, its intervals apart from the others', and every
    difference to it has an interval excluding 0."""
    sweep, proc = basic_sweep
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = (sweep / "comparisons.md").read_text()
    assert "## mjd" in text and "## pck" in text
    table = pd.read_csv(sweep / "comparisons.csv")
    summary = pd.read_csv(sweep / "summary.csv").set_index("model")
    gt, others = summary.loc["ground_truth"], summary.drop(index="ground_truth")
    assert (gt["mjd_hi"] < others["mjd_lo"]).all() and (gt["pck_lo"] > others["pck_hi"]).all()
    for metric in ("mjd", "pck"):
        pairs = table[(table.metric == metric) & (table.a == "ground_truth")]
        assert len(pairs) == 2 and ((pairs.hi < 0) | (pairs.lo > 0)).all(), metric
        section = text.split(f"## {metric}\n")[1].strip().split("\n\n")[0].splitlines()[2:]
        ranks = [[cell.strip() for cell in line.split("|")[1:3]] for line in section]
        assert ranks[0] == ["1", "ground_truth"] and all(r != "1" for r, _ in ranks[1:]), ranks
