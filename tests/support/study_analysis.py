"""The study analysis's test inputs: 5 sources × 15 sequences with independent random metric
values, the analysis options that keep it fast, a generative model of the ratings on them, and the
four cheap metrics of the small `task=analyze` runs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from gesturebench.study.schema import PREDICTORS

SOURCES = ["ground_truth", "a", "b", "c", "d"]
SEQUENCES = [f"s{i:02d}" for i in range(15)]
FAST = {"bootstrap": 200, "permutations": 19}
#: the synthetic participants' ratings: per dimension, an intercept and weights on metrics
MODEL = {
    "hl": {"intercept": 4.5, "weights": {"ldlj_rel": -1.0}},
    "md": {"intercept": 4.0, "weights": {"coverage": 0.8, "fgd": -0.8}},
    "ae": {"intercept": 4.5, "weights": {"ldlj_rel": -0.8, "foot_contact": -0.8}},
    "st": {"intercept": 4.0, "weights": {"bc": 0.8, "coverage": 0.8}},
    "cm": {"intercept": 4.0, "weights": {"srgr": 0.8, "sgp": 0.8}},
}
#: the `metrics` node of the small analyze runs
CHEAP_METRICS = {
    "mjd": {"_target_": "gesturebench.metrics.mjd.MeanJointDistance", "name": "mjd"},
    "pck": {"_target_": "gesturebench.metrics.pck.PCK", "name": "pck", "threshold": 0.1},
    "ldlj_rel": {"_target_": "gesturebench.metrics.ldlj_rel.LDLJRel", "name": "ldlj_rel"},
    "srgr": {"_target_": "gesturebench.metrics.srgr.SemanticRelevanceRecall", "name": "srgr"},
}


def random_metrics_table() -> pd.DataFrame:
    """Independent standard-normal metric values for SOURCES × SEQUENCES; `sc` null everywhere."""
    rng = np.random.default_rng(1)
    index = pd.MultiIndex.from_product([SOURCES, SEQUENCES], names=["source", "sequence_id"])
    table = pd.DataFrame(
        rng.normal(size=(75, len(PREDICTORS))), index=index, columns=list(PREDICTORS)
    )
    table["sc"] = np.nan
    table["chamfer"] = rng.normal(size=75)  # not a predictor: ignored
    return table
