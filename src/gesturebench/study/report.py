"""report.md of `task=analyze`: the analysis for people (Tables 2 and 3, the composites'
coefficients, the predictors left out, the notes, the figures), written from the same
`StudyAnalysis` as the CSV files and analysis.json; 4 significant digits (the CSVs hold the exact
values)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from gesturebench.study.analysis import StudyAnalysis
from gesturebench.study.figures import SYNTHETIC_STAMP

FLOAT_FORMAT = ".4g"


def markdown_table(frame: pd.DataFrame, index: bool = False) -> str:
    """`frame` as a Markdown table (pandas + tabulate), NaN as blank; "(none)" when it is empty."""
    if frame.empty:
        return "(none)"
    return frame.to_markdown(index=index, floatfmt=FLOAT_FORMAT, missingval="")


def coefficient_table(coefficients: pd.DataFrame) -> pd.DataFrame:
    """The composites side by side: one column per dimension, one row per predictor (coefficient of
    its z-score), the intercept last."""
    coef = coefficients.pivot(index="predictor", columns="dimension", values="coef")
    intercept = coefficients.groupby("dimension")["intercept"].first().rename("(intercept)")
    order = list(dict.fromkeys(coefficients["predictor"]))
    return pd.concat([coef.loc[order], intercept.to_frame().T])[list(coef.columns)]


def report_markdown(
    analysis: StudyAnalysis, title: str, synthetic: bool, figures: dict[str, Path]
) -> str:
    """The whole report; `figures` (name → PNG path) are linked relative to the report."""
    t = analysis.tables
    obs = t["observations"]
    lines = [f"# {title}", ""]
    if synthetic:
        lines += [
            f"**{SYNTHETIC_STAMP.capitalize()}**: generated from the clips' metrics by "
            "`study.generator`, not rated by people; for rehearsing the analysis only.",
            "",
        ]
    sources = ", ".join(dict.fromkeys(obs["source"]))
    lines += [
        f"{len(obs)} rated clips ({int((~obs['reference']).sum())} generated) of "
        f"{obs['sequence_id'].nunique()} sequences, sources: {sources}; "
        f"correction {analysis.options.correction}, {analysis.options.bootstrap} bootstrap "
        f"resamples, {analysis.options.permutations} permutations.",
        "",
        "## Quality control",
        "",
        markdown_table(t["qc_summary"]),
        "",
        "## Table 2: correlations between dimensions (Spearman ρ)",
        "",
        markdown_table(t["table2_dimension_correlations"]),
        "",
        "## Table 3: target-specific composites (out-of-fold)",
        "",
        markdown_table(t["table3_composites"]),
        "",
        "## The composites: coefficients of the z-scored predictors",
        "",
        markdown_table(
            coefficient_table(t["composite_coefficients"])
            if len(t["composite_coefficients"])
            else pd.DataFrame(),
            index=True,
        ),
        "",
    ]
    if analysis.left_out:
        lines += ["## Predictors left out", ""]
        lines += [f"- {m}: {why}" for m, why in analysis.left_out.items()] + [""]
    if analysis.notes:
        lines += ["## Notes", ""] + [f"- {note}" for note in analysis.notes] + [""]
    if figures:
        lines += ["## Figures", ""]
        lines += [f"![{name}]({path.name})" for name, path in figures.items()] + [""]
    return "\n".join(lines)
