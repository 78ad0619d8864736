"""Target-specific composites (Table 3): one linear model per dimension from the metrics to the mean
rating.

The model is scikit-learn's `Pipeline(StandardScaler, LinearRegression)` (or `Ridge(alpha)`), so
every fold z-scores the predictors with its own training rows only. Out-of-fold predictions come
from `cross_val_predict` with `LeaveOneOut` (the paper) or `LeaveOneGroupOut` over sequences (the
generated observations share sequences, so plain LOOCV is optimistic). Reported per dimension:
out-of-fold MSE, MAE, composite ρ (Spearman of out-of-fold predictions and ratings), the best
individual metric by |ρ| over the same observations, Δ|ρ| = |ρ_composite| − |ρ_best|, a bootstrap
CI of the composite ρ and a permutation p-value of the grouped gain: the predictors other than the
best are shuffled together across observations (breaking what they add beyond the best metric) and
the whole grouped CV is refitted; p = (1 + #{Δ_perm ≥ Δ}) / (1 + B).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.metrics import mean_absolute_error, mean_squared_error
from sklearn.model_selection import LeaveOneGroupOut, LeaveOneOut, cross_val_predict
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from gesturebench.study.correlation import bootstrap_ci


def composite_model(alpha: float | None = None) -> Pipeline:
    """Fold-standardised OLS with intercept (`alpha=None`) or ridge regression with penalty
    `alpha`."""
    return Pipeline(
        [
            ("scale", StandardScaler()),
            ("fit", LinearRegression() if alpha is None else Ridge(alpha=alpha)),
        ]
    )


def out_of_fold(
    X: np.ndarray, y: np.ndarray, groups: np.ndarray | None = None, alpha: float | None = None
) -> np.ndarray:
    """Out-of-fold predictions: leave-one-out, or leave-one-group-out when `groups` is given."""
    cv = LeaveOneOut() if groups is None else LeaveOneGroupOut()
    return cross_val_predict(composite_model(alpha), X, y, cv=cv, groups=groups)


def spearman_abs(a: np.ndarray, b: np.ndarray) -> float:
    return abs(float(stats.spearmanr(a, b).statistic))


def gain(
    X: np.ndarray, y: np.ndarray, best: int, groups: np.ndarray | None, alpha: float | None
) -> float:
    """Δ|ρ| of the out-of-fold composite over predictor column `best`."""
    return spearman_abs(out_of_fold(X, y, groups, alpha), y) - spearman_abs(X[:, best], y)


def permutation_p(
    X: np.ndarray,
    y: np.ndarray,
    best: int,
    groups: np.ndarray | None,
    alpha: float | None,
    n_permutations: int,
    rng: np.random.Generator,
) -> float:
    """Permutation p-value of the composite's gain over column `best` (see the module docstring)."""
    if n_permutations <= 0 or X.shape[1] < 2:
        return float("nan")
    observed = gain(X, y, best, groups, alpha)
    others = np.array([j for j in range(X.shape[1]) if j != best])
    exceed = 0
    for _ in range(n_permutations):
        shuffled = X.copy()
        shuffled[:, others] = X[rng.permutation(len(X))][:, others]
        exceed += gain(shuffled, y, best, groups, alpha) >= observed - 1e-12
    return (1 + exceed) / (1 + n_permutations)


def fit_composite(
    X: np.ndarray, y: np.ndarray, predictors: list[str], alpha: float | None = None
) -> dict:
    """The composite fitted on all observations: predicted rating = intercept + Σ coef · (x − mean)
    / scale."""
    model = composite_model(alpha).fit(X, y)
    scaler, reg = model.named_steps["scale"], model.named_steps["fit"]
    return {
        "predictors": list(predictors),
        "mean": scaler.mean_.tolist(),
        "scale": scaler.scale_.tolist(),
        "coef": np.ravel(reg.coef_).tolist(),
        "intercept": float(reg.intercept_),
        "model": "ols" if alpha is None else "ridge",
        "alpha": alpha,
        "n": len(y),
    }


def evaluate_composite(
    X: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
    predictors: list[str],
    alpha: float | None = None,
    n_permutations: int = 0,
    n_resamples: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[dict, pd.DataFrame]:
    """Table 3's row for one dimension, and the out-of-fold predictions (LOO and grouped) per
    observation."""
    rng = np.random.default_rng(seed)
    loo = out_of_fold(X, y, None, alpha)
    grouped = out_of_fold(X, y, groups, alpha)
    single = np.array([spearman_abs(X[:, j], y) for j in range(X.shape[1])])
    best = int(np.nanargmax(single))
    rho = stats.spearmanr(loo, y)
    rho_best = float(stats.spearmanr(X[:, best], y).statistic)
    rho_group = float(stats.spearmanr(grouped, y).statistic)
    low, high = bootstrap_ci(loo, y, n_resamples, confidence, rng)
    row = {
        "n": len(y),
        "predictors": len(predictors),
        "model": "ols" if alpha is None else f"ridge(alpha={alpha:g})",
        "mse": float(mean_squared_error(y, loo)),
        "mae": float(mean_absolute_error(y, loo)),
        "rho": float(rho.statistic),
        "p": float(rho.pvalue),
        "ci_low": low,
        "ci_high": high,
        "best_metric": predictors[best],
        "rho_best": rho_best,
        "delta_abs_rho": abs(float(rho.statistic)) - abs(rho_best),
        "group_mse": float(mean_squared_error(y, grouped)),
        "group_mae": float(mean_absolute_error(y, grouped)),
        "group_rho": rho_group,
        "group_delta_abs_rho": abs(rho_group) - abs(rho_best),
        "permutation_p": permutation_p(X, y, best, groups, alpha, n_permutations, rng),
    }
    predictions = pd.DataFrame({"rating": y, "loo_prediction": loo, "group_prediction": grouped})
    return row, predictions


def composites_document(
    composites: dict[str, dict], metric_configs: dict[str, dict], study: dict
) -> dict:
    """composites.json: the fitted composites, the configs of the metrics producing their predictors
    (the options the composites assume; `CompositeRatings` rebuilds those metrics from them) and
    where they come from."""
    return {"version": 1, "composites": composites, "metrics": metric_configs, "study": study}
