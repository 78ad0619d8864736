"""The study's stimulus identity end to end, in process, on 3 s windows of mini-BEAT2:
`task=render` → `task=study_server` (its ASGI app through a TestClient) → `task=study_export` →
`task=analyze`, which scores exactly the rated windows and refuses analysing them as others."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from fastapi.testclient import TestClient
from omegaconf import open_dict

from gesturebench.render.clips import Camera
from gesturebench.runtime.errors import DataError
from gesturebench.study.server.app import Study, create_app
from gesturebench.study.server.design import AttentionChecks, EntryLimit, StudyDesign
from gesturebench.study.server.manifest import read_manifest
from gesturebench.study.server.store import Store, open_engine
from gesturebench.tasks.analyze import AnalyzeTask
from gesturebench.tasks.job import Job
from gesturebench.tasks.render import RenderTask
from gesturebench.tasks.study_export import StudyExportTask
from tests.study_support import Page, asked_answer, participate
from tests.support.study_analysis import CHEAP_METRICS

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_thread")]

#: The rated sources and how good each looks to the simulated participants (their rating).
QUALITY = {"ground_truth": 6, "jitter": 4, "random_clip": 2}
WINDOWS = ("study.windows.n=3", "study.windows.seconds=3", "study.windows.splits=[test]")


def study_config(config, *overrides: str):
    """The csv study on 3 s windows with `QUALITY`'s sources and cheap metrics plus BC."""
    cfg = config(
        "study=csv", *WINDOWS, "logger=none", "trainer.enable_progress_bar=false", *overrides
    )
    with open_dict(cfg):
        for name in [s for s in cfg.study.sources if s not in QUALITY]:
            del cfg.study.sources[name]
        cfg.metrics = {
            **CHEAP_METRICS,
            "bc": {"_target_": "gesturebench.metrics.bc.BeatConsistency", "name": "bc"},
        }
    return cfg


def rate(stimuli):
    def decide(page: Page) -> dict:
        if page.notice:
            return {d: int(asked_answer(page.notice)) for d in page.dimensions}
        return {d: QUALITY[stimuli[page.stimuli[0]].source] for d in page.dimensions}

    return decide


@pytest.fixture(scope="module")
def chain(config, tmp_path_factory):
    """(render summary, export folder, database URL) after four participants rated every clip."""
    root = tmp_path_factory.mktemp("chain")
    camera = Camera(size=32, style="skeleton")
    rendered = RenderTask(camera=camera)(study_config(config), Job(root / "render"))
    stimuli = read_manifest(rendered["manifest"])
    url = f"sqlite:///{root / 'study.db'}"
    links = EntryLimit(allowed=True)  # the participants' ids are not signed
    design = StudyDesign(block_size=9, attention=AttentionChecks(after=[4]), unsigned=links)
    study = Study(stimuli, design, Store(open_engine(url)), None)
    for n in range(4):  # two per condition, each rating all nine clips of its condition
        with TestClient(create_app(study)) as client:
            assert participate(client, f"p{n}", rate(stimuli)).code
    (root / "export").mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root / "export")  # the run folder outside Hydra
        StudyExportTask(manifest=rendered["manifest"])(config(f"study_server.db_url={url}"), Job())
    return rendered, root / "export" / "ratings.csv"


def test_analyze_scores_exactly_the_rendered_and_rated_windows(chain, config, tmp_path):
    rendered, ratings = chain
    windows = pd.read_csv(rendered["windows"], dtype={"sequence_id": str})
    assert (windows["end"] - windows["start"]).eq(3.0).all() and len(windows) == 3
    exported = pd.read_csv(ratings, dtype={"sequence_id": str})
    rated = exported[exported["dimension"] != "attention"]
    assert set(zip(rated["sequence_id"], rated["start"], rated["end"])) == set(
        zip(windows["sequence_id"], windows["start"], windows["end"])
    )
    summary = AnalyzeTask()(
        study_config(config, f"study.path={ratings}", "study.analysis.bootstrap=50"), Job(tmp_path)
    )
    analysed = [(w["sequence_id"], w["start"], w["end"]) for w in summary["windows"]]
    assert analysed == list(zip(windows["sequence_id"], windows["start"], windows["end"]))
    for source in QUALITY:
        rows = json.loads((tmp_path / "sources" / source / "results.json").read_text())
        per_sequence = rows["per_sequence"]
        assert [r["sequence_id"] for r in per_sequence] == list(windows["sequence_id"])
        assert all(r["frames"] == 90 for r in per_sequence)  # 3 s at 30 fps, not 10 s
    assert summary["observations"]["all"] == 9
    # BC is configured but skipped on windows shorter than its trims: the reason says so
    assert summary["predictors"]["left_out"]["bc"].startswith("skipped by the evaluation (")


def test_analyze_refuses_the_ratings_as_ratings_of_other_windows(chain, config, tmp_path):
    _, ratings = chain
    other = study_config(config, f"study.path={ratings}", "study.windows.seconds=4")
    with pytest.raises(DataError) as err:
        AnalyzeTask()(other, Job(tmp_path))
    message = str(err.value)
    assert message.startswith(str(ratings)) and "\n" not in message
    assert "rated on [" in message and "study.windows.file" in message
    assert not (tmp_path / "sources").exists()  # refused before evaluating anything
