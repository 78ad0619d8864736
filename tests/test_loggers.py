"""What an evaluation logs to W&B, read from the offline run folder without syncing: the run's
group (the sweep id) and tags, its metrics as summary values, results.json and per_sequence.csv as
an artifact, a sweep's summary as a table; intervals as `<name>_lo`/`_hi`
scalars."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from omegaconf import OmegaConf
from wandb.sdk.lib.service.service_connection import ServiceConnection

from gesturebench.reporting.loggers import OFFLINE_SUMMARY, log_results, logged
from gesturebench.tasks.common import logger_factory
from gesturebench.tasks.sweep_summary import SweepSummaryCallback
from tests.helpers import composed
from tests.launch import stopped
from tests.support.results_json import result


@pytest.fixture
def late_wandb_service(monkeypatch):
    """W&B's service handling a run's finish message late, as on a loaded machine (here: never),
    so that a test reading the `.wandb` log right after `finish` fails unless `finish` waits."""
    monkeypatch.setattr(ServiceConnection, "inform_finish", lambda self, run_id: None)


def test_offline_run_is_readable_without_syncing(tmp_path, monkeypatch, late_wandb_service):
    monkeypatch.setenv("WANDB_MODE", "offline")
    files = (tmp_path / "results.json", tmp_path / "per_sequence.csv")
    files[0].write_text("{}")
    files[1].write_text("sequence_id,mjd\na,0.5\n")
    results = {
        "metrics": {"mjd": 0.5, "pck": None},
        "intervals": {"mjd": [0.25, 0.75]},
        "per_sequence": [{"sequence_id": "a", "mjd": 0.5}],
    }
    tags = ("model:m", "dataset:d", "preset:fast")
    factory = logger_factory(composed("logger=wandb").logger)
    with logged(factory, tmp_path, "m-d", {"seed": 0}, tags, "sweep123") as logger:
        log_results(logger, results, None, files)
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


def test_a_sweeps_summary_is_a_table_of_an_offline_run_of_its_group(
    tmp_path, monkeypatch, late_wandb_service
):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("GESTUREBENCH_SWEEP_ID", "unset")  # the callback passes it to its jobs
    logger = OmegaConf.to_container(composed("logger=wandb").logger, resolve=True)
    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}}, "logger": logger})
    callback = SweepSummaryCallback()
    callback.on_multirun_start(config)
    sweep_id = callback.sweep_id
    for model, mjd in (("a", 0.25), ("b", None)):
        (tmp_path / f"model={model}").mkdir()
        doc = result(model, mjd, sweep_id=sweep_id)
        (tmp_path / f"model={model}" / "results.json").write_text(json.dumps(doc))
    callback.on_multirun_end(config)
    (own,) = (tmp_path / "sweeps").iterdir()
    (run,) = list((own / "wandb").glob("offline-run-*"))  # in the sweep's own folder
    doc = json.loads((run / "files" / OFFLINE_SUMMARY).read_text())
    assert doc["name"] == f"sweep-{sweep_id[:8]}" and doc["group"] == sweep_id
    assert doc["tags"] == ["sweep"] and list(doc["tables"]) == ["summary"]
    csv = pd.read_csv(own / "summary.csv")
    (logged,) = list((run / "files" / "media" / "table").glob("summary_*.table.json"))  # W&B's
    for table in (doc["tables"]["summary"], json.loads(logged.read_text())):
        assert table["columns"] == list(csv.columns)
        assert len(table["data"]) == len(csv) == 2
        for row, (_, expected) in zip(table["data"], csv.iterrows()):
            for got, want in zip(row, expected):  # an empty cell is null (NaN in the CSV)
                assert got == want or (got is None and isinstance(want, float) and math.isnan(want))
    (records,) = list(run.glob("*.wandb"))  # W&B's own records, for `wandb sync`
    data = records.read_bytes()
    for text in (sweep_id, "sweep-", logged.name):
        assert text.encode() in data, text


def test_a_setting_w_and_b_refuses_is_one_line_before_any_work(
    monkeypatch, capsys, in_process, tmp_path
):
    """W&B checks its own settings when its run starts, before anything is scored: a refused one
    (here `WANDB_MODE` set but empty) is one line naming the setting, its variable and the value
    (exit 2), and no results are written."""
    monkeypatch.setenv("WANDB_MODE", "")
    run = tmp_path / "run"
    stop = stopped(
        capsys,
        "logger=wandb",
        "metrics=fast",
        "dataset.max_sequences=1",
        "task.render_clips=0",
        f"hydra.run.dir={run}",
    )
    assert stop.code == 2, stop.err
    line = "error: W&B refused its settings: mode (WANDB_MODE): Input should be 'online'"
    assert stop.err.startswith(line) and stop.err.count("\n") == 1, stop.err
    assert "'dryrun' or 'run', got '' (traceback: " in stop.err
    assert not (run / "results.json").exists()
