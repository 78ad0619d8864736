"""Pairwise studies: Bradley–Terry against a brute-force maximum likelihood (scipy), the Elo scale
by a hand-worked case, recovery of planted strengths with bootstrap intervals, the file's
validation, and `task=analyze study=pairwise`."""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from gesturebench.run.config import build
from gesturebench.runtime.errors import DataError
from gesturebench.study.pairwise import (
    PAIRWISE_COLUMNS,
    PairwiseOptions,
    bradley_terry,
    elo,
    elo_table,
    pairwise_csv,
    read_pairwise,
    win_matrix,
)
from gesturebench.tasks.job import Job

SOURCES = ["ground_truth", "a", "b", "c"]
PLANTED = {"ground_truth": 1200.0, "a": 1000.0, "b": 1000.0, "c": 800.0}


def brute_force(frame: pd.DataFrame, sources: list[str], prior: float) -> np.ndarray:
    """Log-strengths maximising the likelihood written out game by game (a tie = half a win each;
    `prior` ties per pair), by BFGS; mean 0."""
    games = [
        (r.source_a, r.source_b, {"a": 1.0, "b": 0.0, "tie": 0.5}[r.winner])
        for r in frame.itertuples()
    ]
    k = {s: i for i, s in enumerate(sources)}

    def nll(beta):
        total = 0.0
        for a, b, score in games:
            d = beta[k[a]] - beta[k[b]]
            total -= score * -np.logaddexp(0, -d) + (1 - score) * -np.logaddexp(0, d)
        for x, y in combinations(sources, 2):  # prior ties: half a win each way, `prior` times
            d = beta[k[x]] - beta[k[y]]
            total -= prior * 0.5 * (-np.logaddexp(0, -d) - np.logaddexp(0, d))
        return total

    beta = minimize(nll, np.zeros(len(sources)), method="BFGS", options={"gtol": 1e-10}).x
    return beta - beta.mean()


def games(seed: int, participants: int = 40, per_participant: int = 30, tie_band: float = 0.1):
    """Comparisons drawn from the planted Elo scores: P(a beats b) = 1 / (1 + 10^((Eb−Ea)/400)),
    a tie when that draw lands within `tie_band` of 0.5."""
    rng = np.random.default_rng(seed)
    pairs = list(combinations(SOURCES, 2))
    rows = []
    for p in range(participants):
        for _ in range(per_participant):
            a, b = pairs[rng.integers(len(pairs))]
            if rng.random() < 0.5:
                a, b = b, a
            p_a = 1 / (1 + 10 ** ((PLANTED[b] - PLANTED[a]) / 400))
            u = rng.random()
            winner = "tie" if abs(u - p_a) < tie_band / 2 else ("a" if u < p_a else "b")
            rows.append((f"p{p:02d}", "muted", "s00", "hl", a, b, winner, pd.NA))
    frame = pd.DataFrame(rows, columns=list(PAIRWISE_COLUMNS))
    frame["passed"] = frame["passed"].astype("boolean")
    return frame


@pytest.mark.parametrize("prior", [0.0, 0.5])
def test_bradley_terry_equals_a_brute_force_maximum_likelihood(prior):
    frame = games(0, participants=3, per_participant=12)
    fitted = bradley_terry(win_matrix(frame, SOURCES), prior)
    assert np.allclose(fitted, brute_force(frame, SOURCES, prior), atol=1e-5)
    assert fitted.mean() == pytest.approx(0.0, abs=1e-12)


def test_elo_scale_by_hand():
    # two sources: the MLE odds are the win ratio, 10:1 is 400 Elo points
    frame = pd.DataFrame(
        [("p", "muted", "s", "hl", "x", "y", "a")] * 10
        + [("p", "muted", "s", "hl", "y", "x", "a")],
        columns=list(PAIRWISE_COLUMNS[:-1]),
    )
    score = elo(bradley_terry(win_matrix(frame, ["x", "y"])), 1000.0)
    assert score[0] - score[1] == pytest.approx(400.0, abs=1e-6)
    assert score.mean() == pytest.approx(1000.0)
    tie = frame.assign(winner="tie")
    assert np.allclose(bradley_terry(win_matrix(tie, ["x", "y"])), 0.0)


def test_elo_table_recovers_planted_scores_and_excludes_inattentive(tmp_path):
    frame = games(1)
    # an inattentive participant: always picks "b", fails both attention checks
    noise = games(2, participants=1).assign(participant_id="zz", winner="b")
    checks = pd.DataFrame(
        [("zz", "muted", "s00", "attention", "a", "b", pd.NA, False)] * 2
        + [("p00", "muted", "s00", "attention", "a", "b", pd.NA, True)],
        columns=list(PAIRWISE_COLUMNS),
    )
    path = tmp_path / "pairwise.csv"
    path.write_text(pairwise_csv(pd.concat([frame, noise, checks], ignore_index=True)))
    table = elo_table(read_pairwise(path), PairwiseOptions(bootstrap=200, seed=0))
    table = table.set_index("source")
    clean = elo_table(frame, PairwiseOptions(bootstrap=200, seed=0)).set_index("source")
    assert np.allclose(table["elo"], clean.loc[table.index, "elo"])  # zz left out
    assert table.loc["ground_truth", "elo"] > table.loc["a", "elo"] > table.loc["c", "elo"]
    centred = {s: v - np.mean(list(PLANTED.values())) + 1000.0 for s, v in PLANTED.items()}
    for source, truth in centred.items():
        low, high = table.loc[source, ["ci_low", "ci_high"]]
        assert low < table.loc[source, "elo"] < high
        assert low - 25 < truth < high + 25, source  # the planted score, up to the tie shrinkage
    assert (table["wins"] + table["losses"] + table["ties"] == table["comparisons"]).all()
    assert table["comparisons"].sum() == 2 * len(frame)


def test_bad_pairwise_rows_name_their_line(tmp_path):
    path = tmp_path / "pairwise.csv"
    header = ",".join(PAIRWISE_COLUMNS)
    for row, message in [
        ("p1,muted,s00,hl,a,b,c,", "line 2: winner must be a, b or tie"),
        ("p1,muted,s00,xx,a,b,a,", "line 2: unknown dimension"),
        ("p1,muted,s00,hl,a,a,a,", "line 2: a comparison needs two different sources"),
        ("p1,muted,s00,attention,a,b,,", "line 2: attention check without passed"),
    ]:
        path.write_text(f"{header}\n{row}\n")
        with pytest.raises(DataError, match=message):
            read_pairwise(path)
    path.write_text("participant_id\np1\n")
    with pytest.raises(DataError, match="missing column"):
        read_pairwise(path)


def test_analyze_task_with_study_pairwise(config, tmp_path, monkeypatch):
    path = tmp_path / "pairwise.csv"
    path.write_text(pairwise_csv(games(3, participants=10)))
    monkeypatch.chdir(tmp_path)
    cfg = config(
        "task=analyze", "study=pairwise", f"study.path={path}", "study.analysis.bootstrap=50"
    )
    summary = build(cfg.task)(cfg, Job.of_hydra())
    table = pd.read_csv(tmp_path / "pairwise_elo.csv")
    assert set(table["source"]) == set(SOURCES) and (table["dimension"] == "hl").all()
    assert json.loads((tmp_path / "analysis.json").read_text())["elo"] == summary["elo"]
    assert summary["participants"] == 10 and summary["excluded"] == []


def test_study_statistics_refuse_impossible_settings():
    from gesturebench.runtime.errors import ConfigError
    from gesturebench.study.analysis import AnalysisOptions

    for bad in ({"confidence": 1.5}, {"bootstrap": 0}, {"exclude_at": 0}):
        with pytest.raises(ConfigError, match=r"study\.analysis"):
            PairwiseOptions(**bad)
        with pytest.raises(ConfigError, match=r"study\.analysis"):
            AnalysisOptions(**bad)
