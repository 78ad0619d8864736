"""A results.json document as the evaluate task writes it (a headline value, a skipped metric with
a multi-line reason, a value of each direction), for the tables and loggers that read one."""

from __future__ import annotations


def result(model="a", mjd=0.123456789, **extra) -> dict:
    return {
        "task": "evaluate",
        "model": model,
        "dataset": "d",
        "preset": "fast",
        "metrics": {"mjd": mjd, "pck": None, "ldlj_gen": 2.5, "sgp_invalid": 3.0},
        "directions": {
            "mjd": "lower",
            "pck": "higher",
            "ldlj_gen": "zero",
            "sgp_invalid": "higher",
        },
        "skipped": {"pck": "no frames | all\nmasked"},
        "options": {"mjd": {}, "pck": {}, "sgp": {}},
        "config_hash": "abcdef0123456789",
        "config": {"task": {"name": "evaluate"}},
        "complete": True,
        **extra,
    }
