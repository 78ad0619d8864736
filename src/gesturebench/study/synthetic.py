"""The synthetic perceptual study (`study=synthetic`): a complete ratings file generated from the
clips' metrics.

Generative model, per clip c = (source, sequence) and dimension d (the weights are
`study.generator.model`):

    latent[c, d] = intercept_d + Σ_m weight_dm · z_m(c) + shared_c + e_cd
    z_m(c)       = (metric_m(c) − mean_m) / sd_m
                   mean and SD over the generated clips (reference excluded)
    shared_c ~ N(0, shared_noise²)
               one draw per clip for all five dimensions (makes the dimensions correlate)
    e_cd     ~ N(0, clip_noise²)

Participants are split over the two conditions (`participants`); each rates `clips_per_participant`
clips on the condition's dimensions (clips dealt from one shuffled order in overlapping blocks, so
every clip gets about the same number of raters). An attentive participant p rates round(latent +
b_p + ε) clipped to 1–7, with b_p ~ N(0, rater_bias²) and ε ~ N(0, rating_noise²), and fails each of
its `attention_checks` checks with probability `lapse`. The `inattentive` participants of a
condition rate uniformly at random and fail all checks but one (at least two), so the exclusion rule
removes exactly them unless an attentive one lapses twice. Rows come out in the ratings-file format
(`study.ratings`), ready for the same reader as real data. A model term whose metric was not
computed for every clip (not in the metrics preset, or null) is dropped with a note.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from gesturebench.runtime.errors import ConfigError
from gesturebench.study.schema import ATTENTION, COLUMNS, CONDITIONS, DIMENSIONS, SCALE


@dataclass(frozen=True)
class SyntheticStudy:
    """The generator's parameters (`study.generator`, see the module docstring); `model` maps
    dimension → (intercept, weights)."""

    model: Mapping[str, Mapping]
    participants: Mapping[str, int] = field(default_factory=lambda: {"muted": 51, "audio": 53})
    inattentive: Mapping[str, int] = field(default_factory=lambda: {"muted": 2, "audio": 1})
    clips_per_participant: int = 25
    attention_checks: int = 3
    lapse: float = 0.03
    rater_bias: float = 0.4
    rating_noise: float = 0.8
    clip_noise: float = 0.2
    shared_noise: float = 0.2
    seed: int = 0

    def __post_init__(self):
        missing = [d for d in DIMENSIONS if d not in self.model]
        if missing:
            raise ConfigError(f"study.generator.model needs every dimension; missing {missing}")
        if self.attention_checks < 2:
            raise ConfigError(
                "study.generator.attention_checks must be at least 2 (exclusion needs two failures)"
            )


def standardised(metrics: pd.DataFrame, generated: pd.Series) -> pd.DataFrame:
    """Metric columns z-scored with the mean and SD (ddof 1) of the generated clips."""
    ref = metrics[generated]
    return (metrics - ref.mean()) / ref.std()


def usable_terms(
    metrics: pd.DataFrame, generated: pd.Series, study: SyntheticStudy
) -> tuple[dict[str, dict], list[str]]:
    """The model's weights restricted to metrics with a value on every clip and some spread over the
    generated clips, and notes on the rest.

    A term whose metric the evaluation did not produce is dropped (the study is then generated from
    the others), so the synthetic study runs with any metrics preset; the notes say which terms were
    dropped and why.
    """
    weights: dict[str, dict] = {}
    notes: list[str] = []
    for d in DIMENSIONS:
        weights[d] = {}
        for m, w in study.model[d].get("weights", {}).items():
            if m not in metrics.columns or metrics[m].isna().any():
                notes.append(
                    f"synthetic model: term {w:+g}·z({m}) of {d} dropped "
                    f"({m} is not computed for every clip)"
                )
            elif not metrics.loc[generated, m].std() > 0:
                notes.append(
                    f"synthetic model: term {w:+g}·z({m}) of {d} dropped ({m} is constant over the "
                    "generated clips)"
                )
            else:
                weights[d][m] = float(w)
    return weights, notes


def latent_ratings(
    metrics: pd.DataFrame,
    generated: pd.Series,
    weights: dict[str, dict],
    study: SyntheticStudy,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """The latent mean rating of every clip and dimension; `metrics` is indexed by (source,
    sequence_id)."""
    used = list(dict.fromkeys(m for d in DIMENSIONS for m in weights[d]))
    z = standardised(metrics[used].astype(float), generated)
    shared = rng.normal(0.0, study.shared_noise, len(metrics))
    latent = {}
    for d in DIMENSIONS:
        value = (
            float(study.model[d].get("intercept", 4.0))
            + shared
            + rng.normal(0.0, study.clip_noise, len(metrics))
        )
        for m, w in weights[d].items():
            value = value + w * z[m].to_numpy()
        latent[d] = value
    return pd.DataFrame(latent, index=metrics.index)


def simulate_participants(
    latent: pd.DataFrame, study: SyntheticStudy, rng: np.random.Generator
) -> pd.DataFrame:
    """Long-format ratings and attention checks of every participant (see the module docstring)."""
    clips = list(latent.index)
    k = min(study.clips_per_participant, len(clips))
    rows = []
    for condition, dims in CONDITIONS.items():
        n = int(study.participants.get(condition, 0))
        inattentive = set(
            rng.choice(n, size=min(int(study.inattentive.get(condition, 0)), n), replace=False)
        )
        order = rng.permutation(len(clips))
        for i in range(n):
            pid = f"{condition[0]}{i + 1:03d}"
            seen = [clips[order[(i * k + j) % len(clips)]] for j in range(k)]
            bias = rng.normal(0.0, study.rater_bias)
            for source, sequence in seen:
                for d in dims:
                    if i in inattentive:
                        rating = int(rng.integers(SCALE[0], SCALE[1] + 1))
                    else:
                        value = (
                            latent.at[(source, sequence), d]
                            + bias
                            + rng.normal(0.0, study.rating_noise)
                        )
                        rating = int(np.clip(np.rint(value), *SCALE))
                    rows.append((pid, condition, source, sequence, d, rating, None))
            if i in inattentive:
                failed = np.arange(study.attention_checks) < max(2, study.attention_checks - 1)
            else:
                failed = rng.random(study.attention_checks) < study.lapse
            for f, j in zip(failed, rng.choice(k, size=study.attention_checks)):
                rows.append((pid, condition, *seen[j], ATTENTION, None, not f))
    return pd.DataFrame(rows, columns=[c for c in COLUMNS if c not in ("start", "end")])


def generate_study(
    metrics: pd.DataFrame, reference_source: str, study: SyntheticStudy
) -> tuple[pd.DataFrame, list[str]]:
    """A complete synthetic ratings table for the clips of `metrics` (index (source, sequence_id)),
    and notes on model terms dropped for want of their metric."""
    rng = np.random.default_rng(study.seed)
    generated = pd.Series(
        metrics.index.get_level_values("source") != reference_source, index=metrics.index
    )
    weights, notes = usable_terms(metrics, generated, study)
    return simulate_participants(
        latent_ratings(metrics, generated, weights, study, rng), study, rng
    ), notes
