"""`task=analyze`: the perceptual-study analysis of docs/study.md, end to end, into the run folder.

1. Study windows: `study.windows.file` (e.g. the windows.csv `task=render` wrote beside its
   stimuli), or the `n` sequences of `study.windows.splits` whose `seconds`-long window holds the
   most semantic events. A ratings file naming other windows (its start, end) is refused; those
   that are rated are scored (`windows.csv`), the others are left out with a note.
2. Every source of `study.sources` is evaluated on the windows with `metrics`
   (`tasks.evaluate.score`, one subfolder `sources/<name>/` each): the task's one `Run` with only
   its model swapped for each source (`Run.with_model`), so the dataset, body model, context and
   prepared metrics are made once; a folder already holding a complete results.json for the same
   config and windows is reused (`resume=true`).
3. Ratings: `study.path` (`study=csv`), or generated from the clips' metrics (`study=synthetic`,
   `ratings.csv`). Invalid rows stop the run with their line numbers unless
   `study.drop_invalid=true`.
4. The analysis (`gesturebench.study.analysis`): CSV tables, Figures 2 and 3 and the composites'
   scatter (PNG, stamped "synthetic ratings" for a synthetic study), `report.md` (Tables 2-3, the
   composites, the notes), `analysis.json`, `composites.json`; tables and figures to the logger
   (W&B by default).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from omegaconf import DictConfig

from gesturebench.reporting.loggers import logged
from gesturebench.reporting.results import config_hash, load_complete, versions, write_json
from gesturebench.run.config import build
from gesturebench.runtime.atomic import write_atomic
from gesturebench.runtime.errors import ConfigError
from gesturebench.runtime.stages import stage
from gesturebench.study import figures
from gesturebench.study.analysis import AnalysisOptions, StudyAnalysis, analyze
from gesturebench.study.composites import composites_document
from gesturebench.study.pairwise import (
    PairwiseOptions,
    elo_table,
    excluded_participants,
    read_pairwise,
)
from gesturebench.study.ratings import (
    rated_windows,
    read_ratings,
    require_valid,
    write_ratings,
)
from gesturebench.study.report import report_markdown
from gesturebench.study.sources import source_model
from gesturebench.study.synthetic import SyntheticStudy, generate_study
from gesturebench.study.window_records import StudyWindows, window_records
from gesturebench.study.windows import Window, configured_windows, window_plan, write_windows
from gesturebench.tasks.evaluate import score
from gesturebench.tasks.job import Job
from gesturebench.tasks.run import Run

log = logging.getLogger(__name__)

#: Per-sequence columns of results.json that are bookkeeping, not metric values.
NOT_METRICS = ("sequence_id", "index", "frames", "dropped_frames", "motionless")


@dataclass
class AnalyzeTask:
    """`task=analyze` (conf/task/analyze.yaml): the analysis the study (`cfg.study`,
    conf/study/*) names by its `analyze` node (`analyze_study`, `analyze_pairwise`), a function of
    the task's `Run` (the study node: `run.study`)."""

    name: str = "analyze"

    def __call__(self, cfg: DictConfig, job: Job) -> dict:
        run = Run.of(cfg, job, model=False)
        return build(run.study["analyze"])(run)


def analysis_options(study: Mapping[str, Any]) -> AnalysisOptions:
    """`study.analysis` built (its `_target_`: AnalysisOptions), predictors as a tuple."""
    options: AnalysisOptions = build(study["analysis"])
    return dataclasses.replace(options, predictors=tuple(options.predictors))


def source_config(config: dict, name: str, node: Mapping[str, Any]) -> dict:
    """The evaluate config of one source (of the analysis's resolved `config`): `model` = the
    source (`source_model`), no logger (the analysis logs), no clips."""
    return {
        **config,
        "model": source_model(name, node),
        "task": {"name": "evaluate", "render_clips": 0},
        "study": {},
        "logger": None,
    }


def evaluate_sources(
    run: Run, windows: list[Window], records: StudyWindows, root: Path
) -> tuple[pd.DataFrame, dict, dict]:
    """Each source of `run.study` evaluated on `records` (its evaluate config, `source_config`;
    `run` with the source's model, `Run.with_model`), into `root`/<name>, reused under
    `run.resume` where complete. Returns the metrics table (index (source, sequence_id)), per
    configured metric the reason a source skipped it, and per metric its direction (results.json
    `directions`). The evaluations record the analysis's metrics preset and sweep."""
    frames: list[pd.DataFrame] = []
    skipped: dict[str, str] = {}
    directions: dict[str, str] = {}
    described = [dataclasses.asdict(w) for w in windows]
    configs = {  # every source checked before any is scored
        name: {**source_config(run.config, name, node), "study": {"windows": described}}
        for name, node in run.study["sources"].items()
    }
    for name, config in configs.items():
        chash = config_hash(config)
        out = root / name
        results = load_complete(out, chash) if run.resume else None
        if results:
            log.info("source %s: reusing %s", name, out / "results.json")
        else:
            log.info("source %s: evaluating %d windows", name, len(records))
            results = score(run.with_model(config["model"]), records, out, config, chash)
        configured = results.get("directions", {})  # the metrics preset's values
        for metric, reason in results.get("skipped", {}).items():
            if metric in configured:
                skipped.setdefault(metric, f"{name}: {reason}")
        directions.update(configured)
        frames.append(pd.DataFrame(results["per_sequence"]).assign(source=name))
    table = pd.concat(frames, ignore_index=True).set_index(["source", "sequence_id"])
    table = table.drop(columns=[c for c in NOT_METRICS if c in table.columns])
    return table.apply(pd.to_numeric, errors="coerce").astype(float), skipped, directions


def is_synthetic(study: Mapping[str, Any]) -> bool:
    return study.get("generator") is not None and study.get("path") is None


def read_study_ratings(path: Path, sources: list[str], windows: list[Window], drop_invalid: bool):
    """The ratings file read and validated against the study's sources and windows (refused if
    invalid)."""
    ratings = read_ratings(path, sources=sources, sequences=[w.sequence_id for w in windows])
    return ratings, require_valid(ratings, drop_invalid)


def unrated_note(configured: list[Window], rated: list[Window]) -> list[str]:
    """A note naming the configured windows that no rating rates (left out of the analysis)."""
    unrated = [w.sequence_id for w in configured if w not in rated]
    if not unrated:
        return []
    return [
        f"{len(unrated)} configured window(s) have no rating and are not analysed: "
        + ", ".join(unrated)
    ]


def synthetic_ratings(
    generator: SyntheticStudy,
    reference: str,
    metrics: pd.DataFrame,
    windows: list[Window],
    path: Path,
) -> list[str]:
    """Generate the synthetic study from the clips' metrics into `path` (`reference`: the
    reference source), each rating with its window; returns the generator's notes."""
    ratings, notes = generate_study(metrics, reference, generator)
    ratings["start"] = ratings["sequence_id"].map({w.sequence_id: w.start for w in windows})
    ratings["end"] = ratings["sequence_id"].map({w.sequence_id: w.end for w in windows})
    write_ratings(path, ratings)
    return notes


def metric_configs(configs: dict[str, dict], predictors: list[str]) -> dict:
    """The metric `configs` (resolved, with `_target_`) whose metrics produce the composites'
    predictors."""
    return {
        key: config
        for key, config in configs.items()
        if set(build(config).value_names) & set(predictors)
    }


def write_outputs(
    analysis: StudyAnalysis,
    sources: list[str],
    out: Path,
    directions: dict[str, str],
    synthetic: bool,
    title: str,
) -> dict[str, Path]:
    """Every table as CSV, the figures as PNG (stamped when `synthetic`) and report.md in `out`;
    returns name → path."""
    files = {}
    for name, table in analysis.tables.items():
        files[name] = out / f"{name}.csv"
        write_atomic(files[name], table.to_csv(index=False))
    t = analysis.tables
    images = {"figure2": out / "figure2_ratings.png"}
    figures.plot_ratings(t["figure2_source_means"], sources, images["figure2"], synthetic)
    if len(t["figure3_metric_correlations"]):
        n = int(t["figure3_metric_correlations"]["n"].max())
        images["figure3"] = out / "figure3_correlations.png"
        figures.plot_correlations(
            t["figure3_metric_correlations"],
            analysis.options.correction,
            n,
            images["figure3"],
            directions,
            synthetic,
        )
    if len(t["table3_composites"]):
        images["composites_figure"] = out / "figure_composites.png"
        figures.plot_composites(
            t["composite_predictions"],
            t["table3_composites"],
            sources,
            images["composites_figure"],
            synthetic,
        )
    files.update(images)
    files["report"] = out / "report.md"
    write_atomic(files["report"], report_markdown(analysis, title, synthetic, images))
    return files


def log_analysis(logger, analysis: StudyAnalysis, files: dict[str, Path]) -> None:
    """Tables and images to W&B; the composites' ρ as scalars to any logger."""
    if logger is None:
        return
    table3 = analysis.tables["table3_composites"]
    logger.log_metrics(
        {
            f"study/{r.dimension}/{k}": getattr(r, k)
            for r in table3.itertuples()
            for k in ("rho", "delta_abs_rho", "group_rho")
        }
    )
    from pytorch_lightning.loggers import WandbLogger

    if isinstance(logger, WandbLogger):
        for name in (
            "qc_summary",
            "figure2_source_means",
            "table2_dimension_correlations",
            "figure3_metric_correlations",
            "table3_composites",
            "composite_coefficients",
        ):
            logger.log_table(name, dataframe=analysis.tables[name])
        for name in ("figure2", "figure3", "composites_figure"):
            if name in files:
                logger.log_image(name, images=[str(files[name])])


def ratings_file(study: Mapping[str, Any]) -> Path:
    if study.get("path") in (None, "", "???"):
        raise ConfigError(
            f"study={study['name']} needs study.path=/path/to/ratings.csv (long format, "
            "docs/study.md)"
        )
    return Path(study["path"])


def export_composites(
    analysis: StudyAnalysis,
    metrics: dict[str, dict],
    study: dict,
    windows: list[Window],
    ratings: Path,
    path: Path,
) -> None:
    """composites.json: the fitted composites with the metric configs they assume (of `metrics`,
    the resolved metric configs) and the study they come from (`study`: its dataset,
    window_seconds and sources)."""
    predictors = next(iter(analysis.composites.values()))["predictors"]
    record = {
        "ratings": str(ratings),
        "dataset": study["dataset"],
        "window_seconds": study["window_seconds"],
        "windows": [dataclasses.asdict(w) for w in windows],
        "sources": study["sources"],
        "generated_clips": int((~analysis.tables["observations"]["reference"]).sum()),
    }
    write_json(
        path, composites_document(analysis.composites, metric_configs(metrics, predictors), record)
    )


def analyze_pairwise(run: Run) -> dict:
    """`study=pairwise`: Bradley–Terry Elo scores with bootstrap intervals per dimension and source
    (pairwise_elo.csv), participants' attention checks (qc_participants.csv), analysis.json, in
    the run folder."""
    out, study = run.job.run_dir, run.study
    options: PairwiseOptions = build(study["analysis"])
    if study.get("path") in (None, "???"):
        raise ConfigError("study.path is not set: add study.path=... to the command line")
    comparisons = read_pairwise(study["path"])
    with stage(
        f"Bradley-Terry scores with {options.bootstrap} bootstrap resamples",
        "Elo intervals per dimension",
    ):
        table = elo_table(comparisons, options)
    excluded = excluded_participants(comparisons, options.exclude_at)
    files = {"pairwise_elo": out / "pairwise_elo.csv"}
    write_atomic(files["pairwise_elo"], table.to_csv(index=False))
    summary = {
        "task": "analyze",
        "study": study["name"],
        "comparisons": str(study["path"]),
        "participants": int(comparisons["participant_id"].nunique()),
        "excluded": sorted(excluded),
        "elo": table.to_dict(orient="records"),
        "files": {k: str(v) for k, v in files.items()},
        "config": run.config,
        "versions": versions(),
    }
    write_json(out / "analysis.json", summary)
    for row in table.itertuples():
        log.info(
            "%s %-14s Elo %7.1f [%7.1f, %7.1f]",
            row.dimension,
            row.source,
            row.elo,
            row.ci_low,
            row.ci_high,
        )
    return summary


def analyze_study(run: Run) -> dict:
    """The whole task into the run folder; returns the analysis.json document."""
    out, study, source = run.job.run_dir, run.study, run.dataset
    options = analysis_options(study)
    plan = window_plan(study["windows"])
    synthetic = is_synthetic(study)
    generator: SyntheticStudy | None = build(study["generator"]) if synthetic else None
    path = out / "ratings.csv" if synthetic else ratings_file(study)
    described = {
        "dataset": source.name,
        "window_seconds": float(plan.spec.seconds),
        "sources": list(study["sources"]),
    }
    sources = list(study["sources"])
    if options.reference_source not in sources:
        log.warning(
            "reference source %r is not among study.sources %s", options.reference_source, sources
        )
    drop_invalid = bool(study.get("drop_invalid", False))
    splits = source.splits(plan.splits)
    windows = configured_windows(plan, splits)
    window_notes = []
    if not synthetic:  # refuse bad ratings before the (long) evaluation
        ratings, valid = read_study_ratings(path, sources, windows, drop_invalid)
        rated = rated_windows(path, valid, windows)
        window_notes = unrated_note(windows, rated)
        windows = rated
    records = window_records(plan, splits, windows)
    write_windows(out / "windows.csv", windows)
    metrics, skipped, directions = evaluate_sources(run, windows, records, out / "sources")
    generator_notes = (
        synthetic_ratings(generator, study["reference_source"], metrics, windows, path)
        if generator is not None
        else []
    )
    if synthetic:
        ratings, valid = read_study_ratings(path, sources, windows, drop_invalid)
    with stage(
        f"analysing the ratings ({options.bootstrap} bootstrap resamples, "
        f"{options.permutations} permutations)",
        "confidence intervals of Tables 2-3 and the composites' permutation tests",
    ):
        analysis = analyze(valid, metrics, options, skipped)
    analysis.notes[:0] = generator_notes + window_notes
    if ratings.invalid:
        analysis.tables["qc_invalid_rows"] = ratings.invalid_table()
        analysis.notes.append(
            f"{len(ratings.invalid)} invalid row(s) dropped (study.drop_invalid=true): "
            "see qc_invalid_rows.csv"
        )
    title = f"Study analysis: {study['name']} on {source.name}"
    files = write_outputs(analysis, sources, out, directions, synthetic, title)
    if analysis.composites:
        files["composites"] = out / "composites.json"
        export_composites(analysis, run.metrics, described, windows, path, files["composites"])
    summary = {
        "task": "analyze",
        "study": study["name"],
        "ratings": str(path),
        "invalid_rows": [line for line, _ in ratings.invalid],
        "windows": [dataclasses.asdict(w) for w in windows],
        **analysis.summary(),
        "files": {k: str(v) for k, v in files.items()},
        "config": run.config,
        "versions": versions(),
    }
    write_json(out / "analysis.json", summary)
    name = f"analyze-{study['name']}-{source.name}"
    with logged(run.logger, out, name, run.config, (), run.job.sweep_id) as logger:
        log_analysis(logger, analysis, files)
    for note in analysis.notes:
        log.info("note: %s", note)
    log.info("analysis: %s", out / "analysis.json")
    return summary
