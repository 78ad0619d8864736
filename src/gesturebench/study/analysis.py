"""The study analysis of docs/study.md on in-memory tables: QC, aggregation, Table 2, Figure 3,
Table 3.

Input: the valid rows of a ratings file and a metrics table indexed by (source, sequence_id) with
one column per metric (the evaluate runs' per-sequence values on the study windows). An observation
is a clip: its mean rating per dimension and its metric values. Correlations with metrics (Figure 3)
and the composites (Table 3) use the generated clips only; Table 2 is given on the generated clips
and on all clips (ground truth included).

Predictors are the configured metrics (default: the paper's 13) that the metrics table has. A metric
that is null or constant on every generated clip is left out with a note; one null on some clips is
correlated over the clips that have it but left out of the composites (which need complete rows),
also with a note.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from gesturebench.runtime.errors import ConfigError
from gesturebench.runtime.stages import track
from gesturebench.study.aggregate import clip_ratings, rating_matrix, source_means
from gesturebench.study.composites import evaluate_composite, fit_composite
from gesturebench.study.correlation import Correction, adjust, correlation_table, stars
from gesturebench.study.quality import kept_ratings, participant_qc, qc_summary
from gesturebench.study.schema import PREDICTORS

#: Fewest rated generated clips (and sequences) a composite is fitted on.
MIN_CLIPS = 4


@dataclass(frozen=True)
class StudyStatistics:
    """What every study analysis (ratings, pairwise) shares: participants failing `exclude_at`
    attention checks or more are excluded; intervals from `bootstrap` resamples at `confidence`,
    seeded by `seed`."""

    exclude_at: int = 2
    bootstrap: int = 2000
    confidence: float = 0.95
    seed: int = 0

    def __post_init__(self):
        if self.exclude_at < 1 or self.bootstrap < 1 or not 0.0 < self.confidence < 1.0:
            raise ConfigError(
                f"study.analysis: exclude_at={self.exclude_at} and bootstrap={self.bootstrap} "
                f"must be at least 1, confidence={self.confidence} between 0 and 1"
            )


@dataclass(frozen=True)
class AnalysisOptions(StudyStatistics):
    """`study.analysis` options of a rating study: which source is the reference, the predictors,
    the multiple-comparison correction, the composites' ridge penalty, the permutation count."""

    reference_source: str = "ground_truth"
    predictors: tuple[str, ...] = PREDICTORS
    correction: Correction = "holm"
    ridge_alpha: float | None = None
    permutations: int = 99


@dataclass
class StudyAnalysis:
    """Every table of the analysis (name → DataFrame), the composites fitted on all generated clips,
    notes."""

    tables: dict[str, pd.DataFrame]
    composites: dict[str, dict]
    notes: list[str] = field(default_factory=list)
    left_out: dict[str, str] = field(default_factory=dict)
    options: AnalysisOptions = field(default_factory=AnalysisOptions)

    def summary(self) -> dict:
        """The JSON-ready content of analysis.json (tables as lists of records, NaN as null)."""
        obs = self.tables["observations"]
        generated = obs[~obs["reference"]]
        return {
            "options": {
                k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(self.options).items()
            },
            "observations": {
                "all": len(obs),
                "generated": len(generated),
                "sources": list(dict.fromkeys(obs["source"])),
                "sequences": int(obs["sequence_id"].nunique()),
            },
            "predictors": {
                "correlated": list(
                    dict.fromkeys(self.tables["figure3_metric_correlations"]["metric"])
                ),
                "composite": next(iter(self.composites.values()), {}).get("predictors", []),
                "left_out": self.left_out,
            },
            "quality": records(self.tables["qc_summary"]),
            "table2": records(self.tables["table2_dimension_correlations"]),
            "figure3": records(self.tables["figure3_metric_correlations"]),
            "table3": records(self.tables["table3_composites"]),
            "notes": self.notes,
        }


def records(frame: pd.DataFrame) -> list[dict]:
    """Rows as dicts of plain Python values, NaN → None (JSON without NaN)."""
    return [
        {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in row.items()}
        for row in frame.astype(object).to_dict("records")
    ]


def screen_predictors(
    generated: pd.DataFrame, predictors: tuple[str, ...], skipped: Mapping[str, str]
) -> tuple[list[str], list[str], dict, list]:
    """(metrics to correlate, metrics for the composites, left-out metric → reason, notes); a
    metric the evaluation skipped (`skipped`: metric → its reason) is left out with that reason."""
    correlated, complete, left_out, notes = [], [], {}, []
    for m in predictors:
        why = f" ({skipped[m]})" if m in skipped else ""
        if m not in generated.columns:
            computed = "not computed by the configured metrics"
            left_out[m] = f"skipped by the evaluation{why}" if why else computed
            continue
        values = pd.to_numeric(generated[m], errors="coerce").astype(float)
        present = values.notna()
        if not present.any():
            left_out[m] = f"null for every generated clip{why}"
        elif values[present].nunique() < 2:
            left_out[m] = "constant over the generated clips"
        else:
            correlated.append(m)
            if present.all():
                complete.append(m)
            else:
                notes.append(
                    f"{m}: null for {int((~present).sum())} of {len(values)} generated clips; "
                    "correlated where present, left out of the composites"
                )
    notes += [f"{m} left out: {why}" for m, why in left_out.items()]
    return correlated, complete, left_out, notes


def dimension_table(obs: pd.DataFrame, dims: list[str], options: AnalysisOptions) -> pd.DataFrame:
    """Table 2: Spearman ρ between every pair of dimensions, on generated clips and on all clips."""
    pairs = list(combinations(dims, 2))
    names = ("dimension_a", "dimension_b")
    parts = []
    for label, frame in (("generated", obs[~obs["reference"]]), ("all", obs)):
        table = correlation_table(
            frame, pairs, names, options.bootstrap, options.confidence, options.seed
        )
        parts.append(table.set_index(list(names)).add_suffix(f"_{label}"))
    return pd.concat(parts, axis=1).reset_index()


def metric_table(
    generated: pd.DataFrame, metrics: list[str], dims: list[str], options: AnalysisOptions
) -> pd.DataFrame:
    """Figure 3: Spearman ρ of every metric with every dimension, with corrected p-values and their
    stars."""
    table = correlation_table(
        generated,
        [(m, d) for m in metrics for d in dims],
        ("metric", "dimension"),
        options.bootstrap,
        options.confidence,
        options.seed,
    )
    table[f"p_{options.correction}"] = adjust(table["p"], options.correction)
    table[f"stars_{options.correction}"] = [stars(p) for p in table[f"p_{options.correction}"]]
    return table


def composite_tables(
    generated: pd.DataFrame,
    predictors: list[str],
    dims: list[str],
    options: AnalysisOptions,
    notes: list[str],
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    """Table 3, the fitted coefficients, the out-of-fold predictions and the exported composites."""
    rows, coefficients, predictions, composites = [], [], [], {}
    for d in track(dims, "composites"):
        data = generated[generated[d].notna()]
        if not predictors or len(data) < MIN_CLIPS or data["sequence_id"].nunique() < 2:
            notes.append(
                f"composite {d}: not fitted ({len(data)} rated generated clips, "
                f"{data['sequence_id'].nunique()} sequences, {len(predictors)} predictors)"
            )
            continue
        smallest_fold = len(data) - data["sequence_id"].value_counts().max()
        if options.ridge_alpha is None and smallest_fold <= len(predictors) + 1:
            notes.append(
                f"composite {d}: {len(predictors)} predictors and {smallest_fold} training clips "
                "in the smallest grouped fold: OLS is underdetermined there "
                "(consider study.analysis.ridge_alpha)"
            )
        X, y = data[predictors].to_numpy(float), data[d].to_numpy(float)
        groups = data["sequence_id"].to_numpy()
        row, oof = evaluate_composite(
            X,
            y,
            groups,
            predictors,
            options.ridge_alpha,
            options.permutations,
            options.bootstrap,
            options.confidence,
            options.seed,
        )
        rows.append({"dimension": d, **row})
        predictions.append(
            oof.assign(dimension=d, source=data["source"].to_numpy(), sequence_id=groups)
        )
        fitted = fit_composite(X, y, predictors, options.ridge_alpha)
        composites[d] = fitted
        coefficients += [
            {
                "dimension": d,
                "predictor": p,
                "coef": c,
                "mean": m,
                "scale": s,
                "intercept": fitted["intercept"],
            }
            for p, c, m, s in zip(predictors, fitted["coef"], fitted["mean"], fitted["scale"])
        ]
    columns = [
        "dimension",
        "n",
        "predictors",
        "model",
        "mse",
        "mae",
        "rho",
        "p",
        "ci_low",
        "ci_high",
        "best_metric",
        "rho_best",
        "delta_abs_rho",
        "group_mse",
        "group_mae",
        "group_rho",
        "group_delta_abs_rho",
        "permutation_p",
    ]
    prediction_table = pd.concat(predictions, ignore_index=True) if predictions else pd.DataFrame()
    return (
        pd.DataFrame(rows, columns=columns),
        pd.DataFrame(coefficients),
        prediction_table,
        composites,
    )


def analyze(
    ratings: pd.DataFrame,
    metrics: pd.DataFrame,
    options: AnalysisOptions,
    skipped: Mapping[str, str] | None = None,
) -> StudyAnalysis:
    """The whole analysis; `ratings` are valid rows of the file format, `metrics` is indexed
    (source, sequence_id), `skipped` gives the reason of each metric the evaluation skipped."""
    qc = participant_qc(ratings, options.exclude_at)
    clips = clip_ratings(kept_ratings(ratings, qc))
    matrix = rating_matrix(clips)
    dims = list(matrix.columns)
    obs = metrics.join(matrix, how="inner")[
        [*dims, *metrics.columns]
    ].reset_index()  # sources in evaluation order
    obs.insert(2, "reference", obs["source"] == options.reference_source)
    notes = []
    unrated = len(metrics) - len(obs)
    if unrated:
        notes.append(f"{unrated} evaluated clip(s) have no kept rating and are not analysed")
    if not obs["reference"].any():
        notes.append(
            f"no clip of the reference source '{options.reference_source}': Table 2's 'all' equals "
            "'generated'"
        )
    generated = obs[~obs["reference"]].reset_index(drop=True)
    correlated, complete, left_out, screen_notes = screen_predictors(
        generated, options.predictors, skipped or {}
    )
    notes += screen_notes
    table3, coefficients, predictions, composites = composite_tables(
        generated, complete, dims, options, notes
    )
    tables = {
        "qc_participants": qc,
        "qc_summary": qc_summary(qc),
        "clip_ratings": clips,
        "figure2_source_means": source_means(clips),
        "observations": obs,
        "table2_dimension_correlations": dimension_table(obs, dims, options),
        "figure3_metric_correlations": metric_table(generated, correlated, dims, options),
        "table3_composites": table3,
        "composite_coefficients": coefficients,
        "composite_predictions": predictions,
    }
    return StudyAnalysis(tables, composites, notes, left_out, options)
