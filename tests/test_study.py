"""Perceptual-study analysis on in-memory tables: ratings validation, QC, correlations, composites,
windows and the synthetic study's recovery (no evaluation run; each test takes seconds). The
composite metrics' tests are in tests/metrics/test_composite.py."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.model_selection import LeaveOneOut, cross_validate

from gesturebench.annotation.events import Event, collect_events
from gesturebench.data.records import (
    SAMPLE_RATE,
    Motion,
    SemInterval,
    SequenceRecord,
    Word,
)
from gesturebench.runtime.errors import ConfigError, GestureBenchError
from gesturebench.study.analysis import AnalysisOptions, analyze, screen_predictors
from gesturebench.study.composites import (
    composite_model,
    fit_composite,
    out_of_fold,
)
from gesturebench.study.correlation import adjust, correlation_table, holm, spearman_rho
from gesturebench.study.quality import kept_ratings, participant_qc, qc_summary
from gesturebench.study.ratings import (
    RatingsError,
    rated_windows,
    read_ratings,
    require_valid,
    write_ratings,
)
from gesturebench.study.schema import COLUMNS, DIMENSIONS
from gesturebench.study.synthetic import SyntheticStudy, generate_study
from gesturebench.study.window_records import cut_window
from gesturebench.study.windows import Window, select_windows
from tests.support.study_analysis import FAST, MODEL, SEQUENCES, SOURCES

pytestmark = pytest.mark.usefixtures("one_thread")


# ---------- ratings file ----------


#: A ratings file's columns without the optional window (start, end).
NO_WINDOW = tuple(c for c in COLUMNS if c not in ("start", "end"))


def write_csv(path, rows: list[str]) -> None:
    path.write_text("\n".join([",".join(NO_WINDOW), *rows]) + "\n")


def test_bad_rows_are_refused_with_their_line_numbers(tmp_path):
    path = tmp_path / "ratings.csv"
    write_csv(
        path,
        [
            "p1,muted,a,s00,hl,5,",  # line 2: fine
            "p1,muted,a,s00,md,9,",  # line 3: rating outside 1-7
            "p1,muted,zz,s00,ae,4,",  # line 4: unknown source
            "p2,audio,b,s01,st,6,",  # line 5: fine
            "p2,audio,b,s01,hl,3,",  # line 6: hl is a muted dimension
            "p2,audio,b,s01,attention,,true",  # line 7: fine attention check
        ],
    )
    ratings = read_ratings(path, sources=SOURCES, sequences=SEQUENCES)
    assert [line for line, _ in ratings.invalid] == [3, 4, 6]
    with pytest.raises(RatingsError) as err:
        require_valid(ratings, drop_invalid=False)
    message = str(err.value)
    assert "\n" not in message and str(path) in message
    assert "line(s) 3, 4, 6 " in message
    assert "less than or equal to 7" in message and "unknown source 'zz'" in message
    assert "'hl' is not rated in condition 'audio'" in message
    kept = require_valid(ratings, drop_invalid=True)
    assert kept["line"].tolist() == [2, 5, 7]
    assert kept["rating"].tolist()[:2] == [5, 6] and bool(kept["passed"].iloc[2])


def test_other_row_problems_and_missing_columns(tmp_path):
    path = tmp_path / "ratings.csv"
    write_csv(
        path,
        [
            "p1,muted,a,s00,hl,4.0,",  # 2: "4.0" is the integer 4
            "p1,muted,a,s00,hl,4.5,",  # 3: not an integer
            "p1,muted,a,s99,hl,4,",  # 4: unknown sequence
            "p1,muted,,,attention,,",  # 5: attention check without passed
            "p1,audio,a,s00,st,4,",  # 6: p1 already rated muted
            "p3,loud,a,s00,hl,4,",  # 7: unknown condition
            "p3,muted,a,s00,xx,4,",  # 8: unknown dimension
            "p4,muted,a,s00,hl,,",  # 9: missing rating
        ],
    )
    ratings = read_ratings(path, sources=SOURCES, sequences=SEQUENCES)
    assert [line for line, _ in ratings.invalid] == [3, 4, 5, 6, 7, 8, 9]
    assert ratings.frame["line"].tolist() == [2] and ratings.frame["rating"].iloc[0] == 4
    bad = tmp_path / "bad.csv"
    bad.write_text("participant_id,condition,source\np1,muted,a\n")
    with pytest.raises(GestureBenchError, match="missing column"):
        read_ratings(bad)


WINDOWS = [Window("s00", "test", 2.0, 5.0), Window("s01", "test", 0.0, 3.0)]


def windowed(path, rows: list[str]):
    """`rows` (participant, condition, source, sequence, start, end, dimension, rating, passed)
    written as a ratings file and read back valid."""
    path.write_text("\n".join([",".join(COLUMNS), *rows]) + "\n")
    read = read_ratings(path, sources=SOURCES, sequences=["s00", "s01"])
    assert not read.invalid, read.invalid
    return read.frame


def test_ratings_of_other_windows_are_refused_with_one_line_naming_the_file(tmp_path):
    path = tmp_path / "ratings.csv"
    frame = windowed(
        path,
        [
            "p1,muted,a,s00,2.0,5.0,hl,5,",  # the configured window
            "p1,muted,a,s01,0,10,hl,4,",  # 10 s where 3 s were configured
            "p1,muted,a,s01,0,10,md,4,",  # (named once)
            "p1,muted,,,,,attention,,true",
        ],
    )
    with pytest.raises(GestureBenchError) as err:
        rated_windows(path, frame, WINDOWS)
    message = str(err.value)
    assert "\n" not in message and message.startswith(str(path))
    assert "s01 rated on [0, 10] s, configured [0, 3] s" in message and "s00" not in message
    assert "study.windows.file" in message


def test_rated_windows_are_the_configured_ones_that_are_rated(tmp_path):
    path = tmp_path / "ratings.csv"
    rated = windowed(path, ["p1,muted,a,s00,2.0005,5,hl,5,", "p1,muted,,,,,attention,,true"])
    assert rated_windows(path, rated, WINDOWS) == WINDOWS[:1]  # within CSV rounding; s01 unrated
    bare = tmp_path / "bare.csv"  # a file without the window rates the configured windows
    write_csv(bare, ["p1,muted,a,s01,hl,5,"])
    assert rated_windows(bare, read_ratings(bare).frame, WINDOWS) == WINDOWS[1:]


def test_a_window_needs_its_start_and_end(tmp_path):
    path = tmp_path / "ratings.csv"
    path.write_text(",".join(COLUMNS) + "\np1,muted,a,s00,2,,hl,5,\np1,muted,a,s00,5,2,md,5,\n")
    invalid = dict(read_ratings(path).invalid)
    assert "needs both start and end" in invalid[2] and "not after its start" in invalid[3]


def test_a_skipped_predictor_is_left_out_with_the_evaluations_reason():
    generated = pd.DataFrame({"mjd": [1.0, 2.0, 3.0], "srgr": [np.nan] * 3})
    reasons = {"bc": "a: every window is shorter than BC's trim", "srgr": "a: no sem"}
    _, _, left_out, notes = screen_predictors(generated, ("mjd", "bc", "srgr", "fgd"), reasons)
    assert left_out == {
        "bc": "skipped by the evaluation (a: every window is shorter than BC's trim)",
        "srgr": "null for every generated clip (a: no sem)",
        "fgd": "not computed by the configured metrics",
    }
    assert notes == [f"{m} left out: {why}" for m, why in left_out.items()]


# ---------- quality control ----------


def test_exclusion_follows_two_or_more_failed_checks():
    rows = []
    for pid, fails in (("p0", 0), ("p1", 1), ("p2", 2), ("p3", 3)):
        rows.append((pid, "muted", "a", "s00", "hl", 4, None))
        rows += [(pid, "muted", "", "", "attention", None, i >= fails) for i in range(3)]
    rows.append(("q0", "audio", "a", "s00", "st", 5, None))  # no checks at all: kept
    ratings = pd.DataFrame(rows, columns=list(NO_WINDOW))
    qc = participant_qc(ratings, exclude_at=2).set_index("participant_id")
    assert qc["failed"].to_dict() == {"p0": 0, "p1": 1, "p2": 2, "p3": 3, "q0": 0}
    assert qc.index[qc["excluded"]].tolist() == ["p2", "p3"]
    assert qc.at["p2", "reason"] == "failed 2 of 3 attention checks (>= 2)"
    assert set(kept_ratings(ratings, qc.reset_index())["participant_id"]) == {"p0", "p1", "q0"}
    assert (kept_ratings(ratings, qc.reset_index())["dimension"] != "attention").all()
    summary = qc_summary(qc.reset_index()).set_index("condition")
    assert summary.loc["muted", ["recruited", "excluded", "kept", "ratings_kept"]].tolist() == [
        4,
        2,
        2,
        2,
    ]
    assert participant_qc(ratings, exclude_at=3).query("excluded")["participant_id"].tolist() == [
        "p3"
    ]


# ---------- correlations ----------


def test_spearman_values_and_p_values_equal_scipy():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(rng.normal(size=(40, 3)), columns=["x", "y", "z"])
    frame["y"] += frame["x"]
    frame.loc[5, "z"] = np.nan  # pairwise omission
    frame["t"] = np.round(frame["x"], 0)  # ties
    table = correlation_table(
        frame, [("x", "y"), ("x", "z"), ("t", "y")], ("a", "b"), n_resamples=100
    )
    for row in table.itertuples():
        ok = frame[[row.a, row.b]].dropna()
        ref = stats.spearmanr(ok[row.a], ok[row.b])
        assert row.n == len(ok)
        assert row.rho == pytest.approx(ref.statistic, abs=1e-12)
        assert row.p == pytest.approx(ref.pvalue, rel=1e-10)
        assert row.ci_low <= row.rho <= row.ci_high
    x = rng.normal(size=(7, 25))
    y = x + rng.normal(size=(7, 25))
    expected = [stats.spearmanr(a, b).statistic for a, b in zip(x, y, strict=True)]
    assert np.allclose(spearman_rho(x, y, axis=-1), expected)


def test_holm_and_bh_corrections():
    p = np.array([0.01, 0.04, 0.03, 0.005, 0.5])
    m = len(p)
    order = np.argsort(p)
    brute = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):  # Holm's definition, step by step
        running = max(running, min(1.0, (m - rank) * p[i]))
        brute[i] = running
    assert np.allclose(holm(p), brute)
    assert np.allclose(adjust(p, "bh"), stats.false_discovery_control(p, method="bh"))
    assert np.isnan(adjust([0.01, np.nan], "holm")[1]) and adjust([0.01, np.nan], "holm")[0] == 0.01


# ---------- composites: cross-validation without leakage ----------


def direct_loop(X, y, folds, alpha=None, leaky=False):
    """Out-of-fold predictions refitting the z-scoring and (ridge-penalised) least squares without
    each fold."""
    pred = np.empty(len(y))
    for test in folds:
        train = np.setdiff1d(np.arange(len(y)), test)
        fit_rows = np.arange(len(y)) if leaky else train
        mean, sd = X[fit_rows].mean(0), X[fit_rows].std(0)
        z = (X - mean) / sd
        A = np.column_stack([np.ones(len(train)), z[train]])
        if alpha is None:
            beta = np.linalg.lstsq(A, y[train], rcond=None)[0]
        else:  # ridge with unpenalised intercept: centre, solve, recover the intercept
            zc, yc = z[train] - z[train].mean(0), y[train] - y[train].mean()
            coef = np.linalg.solve(zc.T @ zc + alpha * np.eye(X.shape[1]), zc.T @ yc)
            beta = np.r_[y[train].mean() - z[train].mean(0) @ coef, coef]
        pred[test] = np.column_stack([np.ones(len(test)), z[test]]) @ beta
    return pred


def test_loocv_predictions_equal_a_direct_refit_loop_and_ignore_the_held_out_row():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(24, 3))
    y = X @ [1.0, -0.5, 0.2] + rng.normal(0, 0.3, 24)
    X[7, 0] = 1e6  # a huge value in one row: only the folds that train on it may see it
    loo = [np.array([i]) for i in range(24)]
    assert np.allclose(out_of_fold(X, y), direct_loop(X, y, loo), rtol=1e-9, atol=1e-9)
    ridge = out_of_fold(X, y, alpha=2.0)
    assert np.allclose(ridge, direct_loop(X, y, loo, alpha=2.0), rtol=1e-9, atol=1e-9)
    leaky = direct_loop(
        X, y, loo, alpha=2.0, leaky=True
    )  # scaler fitted on all rows, the held-out one included
    assert abs(ridge[7] - leaky[7]) > 1.0  # the row's own fold must not scale with its value
    fitted = cross_validate(
        composite_model(),
        X,
        y,
        cv=LeaveOneOut(),
        scoring="neg_mean_squared_error",
        return_estimator=True,
    )["estimator"]
    means = np.array([e.named_steps["scale"].mean_[0] for e in fitted])
    assert means[7] == pytest.approx(
        np.delete(X[:, 0], 7).mean()
    )  # the fold holding out row 7 never saw it
    assert (np.delete(means, 7) > 1e4).all()  # every other fold trains on it
    groups = np.repeat(np.arange(6), 4)
    by_group = [np.flatnonzero(groups == g) for g in range(6)]
    assert np.allclose(out_of_fold(X, y, groups), direct_loop(X, y, by_group), rtol=1e-9, atol=1e-9)


# ---------- synthetic study: the analysis recovers its generative model ----------


@pytest.fixture(scope="module")
def synthetic(metrics_table, tmp_path_factory):
    study = SyntheticStudy(model=MODEL, seed=5)
    ratings, notes = generate_study(metrics_table, "ground_truth", study)
    path = tmp_path_factory.mktemp("study") / "ratings.csv"
    write_ratings(path, ratings)
    read = read_ratings(path, sources=SOURCES, sequences=SEQUENCES)
    return (
        ratings,
        notes,
        read,
        analyze(require_valid(read, False), metrics_table, AnalysisOptions(**FAST)),
    )


def test_synthetic_ratings_file_is_valid_and_complete(synthetic):
    ratings, notes, read, result = synthetic
    assert not read.invalid and not notes
    assert len(read.frame) == len(ratings)
    qc = result.tables["qc_summary"].set_index("condition")
    assert qc.loc["muted", ["recruited", "excluded", "kept"]].tolist() == [51, 2, 49]
    assert qc.loc["audio", ["recruited", "excluded", "kept"]].tolist() == [53, 1, 52]
    checks = ratings[ratings["dimension"] == "attention"]
    failed = (~checks["passed"].astype(bool)).groupby(checks["participant_id"]).sum()
    assert set(failed[failed >= 2].index) == set(
        result.tables["qc_participants"].query("excluded")["participant_id"]
    )
    clips = result.tables["clip_ratings"]
    assert len(clips) == 75 * 5 and clips["n"].min() >= 10  # every clip rated on every dimension


def test_analysis_recovers_the_generative_model(synthetic):
    *_, result = synthetic
    fig3 = result.tables["figure3_metric_correlations"]
    for d, spec in MODEL.items():
        rows = (
            fig3[fig3["dimension"] == d]
            .assign(abs_rho=lambda t: t["rho"].abs())
            .sort_values("abs_rho")
        )
        top = rows.tail(len(spec["weights"]))
        assert set(top["metric"]) == set(spec["weights"]), d
        for m, w in spec["weights"].items():
            row = top.set_index("metric").loc[m]
            assert np.sign(row["rho"]) == np.sign(w) and row["p_holm"] < 0.001, (d, m)
    table3 = result.tables["table3_composites"].set_index("dimension")
    assert (table3["n"] == 60).all() and (table3["predictors"] == 12).all()
    for d, spec in MODEL.items():
        assert table3.at[d, "best_metric"] in spec["weights"]
        if len(spec["weights"]) > 1:  # two equal terms: the composite must beat either metric alone
            assert table3.at[d, "delta_abs_rho"] > 0.1, d
            assert table3.at[d, "group_delta_abs_rho"] > 0.1, d
            assert table3.at[d, "permutation_p"] <= 0.05, d
        else:  # one term: nothing to gain
            assert table3.at[d, "delta_abs_rho"] < 0.05, d
    assert result.left_out == {"sc": "null for every generated clip"}
    table2 = result.tables["table2_dimension_correlations"]
    assert (table2["n_generated"] == 60).all() and (table2["n_all"] == 75).all()
    hl_ae = table2.set_index(["dimension_a", "dimension_b"]).loc[("hl", "ae")]
    assert hl_ae["rho_generated"] > 0.4  # both built from ldlj_rel
    json.dumps(result.summary(), allow_nan=False)


def test_fitted_composite_reproduces_its_in_sample_fit(synthetic, metrics_table):
    *_, result = synthetic
    obs = result.tables["observations"]
    generated = obs[~obs["reference"]]
    hl = result.composites["hl"]
    X = generated[hl["predictors"]].to_numpy(float)
    fitted = fit_composite(X, generated["hl"].to_numpy(float), hl["predictors"])
    assert fitted == hl
    z = (X - X.mean(0)) / X.std(0)
    beta = np.linalg.lstsq(
        np.column_stack([np.ones(len(z)), z]), generated["hl"].to_numpy(float), rcond=None
    )[0]
    assert np.allclose(hl["coef"], beta[1:]) and hl["intercept"] == pytest.approx(beta[0])


def test_a_model_term_without_its_metric_is_dropped_with_a_note(metrics_table):
    study = SyntheticStudy(model=MODEL)
    ratings, notes = generate_study(metrics_table.drop(columns=["sgp"]), "ground_truth", study)
    assert notes == [
        "synthetic model: term +0.8·z(sgp) of cm dropped (sgp is not computed for every clip)"
    ]
    assert set(ratings["dimension"]) == {*DIMENSIONS, "attention"}
    with pytest.raises(ConfigError, match="missing"):
        SyntheticStudy(model={"hl": {}})


# ---------- study windows ----------


def record(seconds: float, sem: list[SemInterval]) -> SequenceRecord:
    n = int(seconds * 30)
    # a distinct value per frame and joint, within the motion contract's rotations
    poses = (np.arange(n * 165, dtype=np.float32) * 1e-5).reshape(n, 165)
    motion = Motion(poses, np.zeros((n, 3)), np.zeros(10), np.zeros((n, 100)))
    audio = np.arange(int(seconds * SAMPLE_RATE), dtype=np.float32)
    words = [Word("a", 1.0, 1.5), Word("b", 11.8, 12.4), Word("c", 20.0, 20.5)]
    return SequenceRecord("1_x_0_1_1", 1, motion, audio, words, sem)


def test_windows_take_the_most_semantic_events_and_cut_everything():
    sem = [
        SemInterval(name, a, b, 0.5)
        for name, a, b in [
            ("05_iconic_h", 1.0, 2.0),
            ("01_beat_align", 3.0, 4.0),
            ("02_deictic_l", 12.5, 13.0),
            ("08_metaphoric_m", 14.0, 15.0),
            ("07_iconic_h", 20.5, 21.5),
            ("02_deictic_m", 11.9, 12.2),
        ]
    ]
    rec = record(30.0, sem)
    (w,) = select_windows({"test": [rec]}, n=1, seconds=10.0, step=0.5)
    assert (w.start, w.end, w.semantic_events) == (11.5, 21.5, 4)
    cut = cut_window(rec, w, index=3)
    assert cut.id == rec.id and cut.index == 3 and cut.meta["start"] == 11.5
    assert np.array_equal(cut.motion.poses, rec.motion.poses[345:645])
    assert np.array_equal(cut.audio, rec.audio[184000:344000])
    assert [(x.word, x.start, x.end) for x in cut.words] == [
        ("b", pytest.approx(0.3), pytest.approx(0.9)),
        ("c", pytest.approx(8.5), pytest.approx(9.0)),
    ]
    assert [s.name for s in cut.sem] == [
        "02_deictic_l",
        "08_metaphoric_m",
        "07_iconic_h",
        "02_deictic_m",
    ]
    assert cut.sem[2].start == pytest.approx(9.0) and cut.sem[2].end == pytest.approx(10.0)
    short = record(5.0, sem)
    assert select_windows({"test": [short]}, n=1, seconds=10.0) == []
    other = Window("2_y_0_1_1", "val", 0.0, 10.0, 4)
    assert other.seconds == 10.0


def test_event_ids_do_not_change_under_windowing():
    """A window's events carry the ids of the same events in the whole sequence (made from BEAT2's
    interval, not the window's shifted times); an interval the window's edge cuts is no event of
    the window."""
    sem = [
        SemInterval("05_iconic_h", 12.0, 13.0, 0.5, "big"),
        SemInterval("02_deictic_l", 15.25, 16.0, 0.5),  # target from the words: none there
        SemInterval("08_metaphoric_m", 21.0, 22.0, 0.5, "idea"),  # cut by the window's end
    ]
    rec = record(30.0, sem)
    cut = cut_window(rec, Window(rec.id, "test", 11.5, 21.5), index=0)
    whole = {e.index: e for e in collect_events(rec.id, rec.sem, rec.words)}
    windowed = collect_events(cut.id, cut.sem, cut.words)
    assert [e.id for e in windowed] == [whole[0].id, whole[1].id]
    assert [(e.start, e.end) for e in windowed] == [
        (pytest.approx(0.5), pytest.approx(1.5)),
        (pytest.approx(3.75), pytest.approx(4.5)),
    ]
    assert whole[0].id == Event(rec.id, 7, 12.0, 13.0, "big", "05_iconic_h", 0.9).id
    assert windowed[0].transcript == "b"  # the words within 0.5 s of the interval
    assert windowed[0].label == "iconic" and cut.sem[2].cut and not cut.sem[0].cut


def test_windowed_source_cuts_whole_sequence_outputs_to_the_window(tmp_path):
    from gesturebench.data.beat2 import write_motion_npz
    from gesturebench.models.sources.outputs import OutputsSource
    from gesturebench.study.windows import WindowedSource

    rec = record(30.0, [])
    window = Window(rec.id, "test", 11.5, 21.5)
    cut = cut_window(rec, window, index=0)
    write_motion_npz(tmp_path / "full" / f"{rec.id}.npz", rec.motion)
    write_motion_npz(tmp_path / "clips" / f"{rec.id}.npz", cut.motion)
    for folder in ("full", "clips"):
        source = WindowedSource(OutputsSource("model", dir=str(tmp_path / folder)), name="model")
        assert source.name == "model"
        assert np.array_equal(source.generate(cut).poses, rec.motion.poses[345:645]), folder


def test_figures_of_a_synthetic_study_are_stamped_and_figure3_rows_carry_directions(
    synthetic, tmp_path
):
    from gesturebench.study import figures

    *_, result = synthetic
    t = result.tables

    def stamps(fig) -> list[str]:
        return [a.get_text() for a in fig.texts if a.get_text() == figures.SYNTHETIC_STAMP]

    directions = {"fgd": "lower", "bc": "higher", "ldlj_rel": "zero"}
    for synthetic_study in (True, False):
        made = [
            figures.plot_ratings(
                t["figure2_source_means"], SOURCES, tmp_path / "f2.png", synthetic_study
            ),
            figures.plot_correlations(
                t["figure3_metric_correlations"],
                "holm",
                60,
                tmp_path / "f3.png",
                directions,
                synthetic_study,
            ),
            figures.plot_composites(
                t["composite_predictions"],
                t["table3_composites"],
                SOURCES,
                tmp_path / "fc.png",
                synthetic_study,
            ),
        ]
        assert [len(stamps(fig)) for fig in made] == [int(synthetic_study)] * 3
    rows = [label.get_text() for label in made[1].axes[0].get_yticklabels()]
    assert {"FGD ↓", "BC ↑", "LDLJ_rel →0", "Dice"} <= set(rows)  # no direction given: no arrow
    assert (tmp_path / "f3.png").read_bytes()[:4] == b"\x89PNG"


def composite_figure(tmp_path, predicted: list[float]):
    from gesturebench.study import figures

    predictions = pd.DataFrame(
        {
            "dimension": "hl",
            "source": ["a", "a", "b", "b"],
            "sequence_id": ["s00", "s01", "s00", "s01"],
            "rating": [2.0, 6.0, 3.0, 5.0],
            "loo_prediction": predicted,
        }
    )
    table3 = pd.DataFrame({"dimension": ["hl"], "rho": [0.5], "best_metric": ["fgd"]})
    table3["rho_best"] = 0.3
    return figures.plot_composites(predictions, table3, SOURCES, tmp_path / "fc.png")


def test_composite_figure_marks_clipped_predictions_and_names_only_rated_sources(tmp_path):
    fig = composite_figure(tmp_path, [0.2, 6.5, 3.1, 9.0])
    ax = fig.axes[0]
    clipped = [c for c in ax.collections if c.get_gid() == "clipped"]
    at_edge = sorted(tuple(p) for c in clipped for p in c.get_offsets())
    assert at_edge == [(2.0, 1.0), (5.0, 7.0)]  # below 1 and above 7: drawn on the edge
    assert all(not c.get_clip_on() for c in clipped)
    inside = sorted(
        tuple(p) for c in ax.collections if c.get_gid() != "clipped" for p in c.get_offsets()
    )
    assert inside == [(3.0, 3.1), (6.0, 6.5)]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["a", "b", "▲/▼ predicted beyond 1–7,\ndrawn at the edge"]  # c, d unrated
    assert ax.get_xlabel() == "Mean rating of the clip (1–7)"
    assert ax.get_ylabel().startswith("Rating predicted by the composite")
    assert ax.get_title().startswith("Human-likeness: composite ρ = 0.50")
    within = composite_figure(tmp_path, [2.0, 6.5, 3.1, 7.0])
    assert not [c for c in within.axes[0].collections if c.get_gid() == "clipped"]
    assert [t.get_text() for t in within.axes[0].get_legend().get_texts()] == ["a", "b"]


def test_ratings_figure_leaves_unrated_sources_out_of_its_legend(tmp_path):
    from gesturebench.study import figures

    means = pd.DataFrame(
        {"source": ["a", "b"], "dimension": "hl", "mean": [4.0, 5.0], "sd_between_sequences": 0.5}
    )
    fig = figures.plot_ratings(means, SOURCES, tmp_path / "f2.png")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b"]
    assert len(ax.patches) == 2  # one bar per rated source and dimension
