"""What an evaluation logs to W&B, read from the offline run folder without syncing: the run's
group (the sweep id) and tags, its metrics as summary values, results.json and per_sequence.csv as
an artifact (issue 22, item 15); intervals as `<name>_lo`/`_hi` scalars (issue 19)."""

from __future__ import annotations

import json

from gesturebench.loggers import OFFLINE_SUMMARY, finish, log_results, make_logger
from tests.helpers import composed


def test_offline_run_is_readable_without_syncing(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("GESTUREBENCH_SWEEP_ID", "sweep123")
    files = (tmp_path / "results.json", tmp_path / "per_sequence.csv")
    files[0].write_text("{}")
    files[1].write_text("sequence_id,mjd\na,0.5\n")
    results = {
        "metrics": {"mjd": 0.5, "pck": None},
        "intervals": {"mjd": [0.25, 0.75]},
        "per_sequence": [{"sequence_id": "a", "mjd": 0.5}],
    }
    tags = ("model:m", "dataset:d", "preset:fast")
    logger = make_logger(composed("logger=wandb").logger, tmp_path, "m-d", {"seed": 0}, tags)
    try:
        log_results(logger, results, None, files)
    finally:
        finish(logger)
    (run,) = list((tmp_path / "wandb").glob("offline-run-*"))
    doc = json.loads((run / "files" / OFFLINE_SUMMARY).read_text())
    assert doc["name"] == "m-d" and doc["group"] == "sweep123"
    assert doc["tags"] == list(tags)
    # no value, no summary entry; an interval as two more scalars
    assert doc["summary"] == {"mjd": 0.5, "mjd_lo": 0.25, "mjd_hi": 0.75}
    assert doc["artifact"]["type"] == "results"
    assert doc["artifact"]["files"] == ["results.json", "per_sequence.csv"]
    (records,) = list(run.glob("*.wandb"))  # W&B's own records, for `wandb sync`
    data = records.read_bytes()
    for text in ("sweep123", "model:m", "preset:fast", doc["artifact"]["name"].split(":")[0]):
        assert text.encode() in data, text
