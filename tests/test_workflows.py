"""The documented workflows are the tests: every command block of README.md and docs/*.md runs here,
as written, through the real `launch.py` process (`tests/workflows`: the collector, the
substitution table, the registry of which test runs which command), and its outputs are checked for
the files the docs promise. The fast-tier test fails on a documented command no test runs."""

from __future__ import annotations

import json
import secrets
import shutil
import time
from pathlib import Path

import httpx
import numpy as np
import pandas as pd
import pytest
import soundfile as sf

from gesturebench.data.annotations_io import write_textgrid_words
from gesturebench.data.records import Word
from gesturebench.study.schema import COLUMNS
from gesturebench.study.server.app import link_signature
from gesturebench.study.server.manifest import read_manifest
from tests.study_support import Page, asked_answer, free_port, participate, wait_ready
from tests.support.latex import compile_pdf
from tests.support.requires import BEAT2_SAMPLE, require_shared
from tests.workflows.blocks import Block, blocks, commands, documented, yaml_block
from tests.workflows.registry import WORKFLOWS, covered
from tests.workflows.shell import Shell, ok
from tests.workflows.substitutions import NOT_PROGRAMS, NOT_WORKFLOWS, SETUP, fill

REPO = Path(__file__).resolve().parents[1]
#: how good each of the csv study's sources looks to the simulated participants (mean rating)
QUALITY = {"ground_truth": 6, "jitter": 5, "rotation_noise": 4, "delayed": 4, "random_clip": 2}
PARTICIPANTS = 5
#: the environment variable of docs/study_server.md's signed links (`task.link_secret_env`)
LINK_SECRET = "GESTUREBENCH_STUDY_LINK_SECRET"


def test_every_documented_command_is_run_by_a_workflow_or_listed_with_a_reason():
    """Each command of each block: run by a test of WORKFLOWS, setup CI did, or not a workflow
    with its reason; every registered or listed command is still in the docs."""
    unclaimed = [
        f"{block.where}: {command!r}"
        for block in blocks()
        if not (block.lang == "python" and block.file in NOT_PROGRAMS)
        for command in commands(block)
        if command not in covered() and command not in NOT_WORKFLOWS and not SETUP.match(command)
    ]
    assert not unclaimed, "documented commands no test runs:\n" + "\n".join(unclaimed)
    stale = sorted((set(covered()) | set(NOT_WORKFLOWS)) - set(documented()))
    assert not stale, f"listed but no longer in the docs: {stale}"
    assert set(WORKFLOWS) <= set(globals()), set(WORKFLOWS) - set(globals())


def test_the_collector_reads_blocks_as_bash_does():
    """Continuation lines joined, comments and blank lines dropped, `&&` and `;` split, but not
    inside quotes."""
    block = Block("x.md", 1, "bash", "a && b  # c\n# d\n\nx y \\\n    z 'p # q; r'; s")
    assert commands(block) == ["a", "b", "x y z 'p # q; r'", "s"]


def sample() -> Path:
    """The real BEAT2 sample: skipped where absent, a failure under CI (`CI=true`)."""
    return require_shared(BEAT2_SAMPLE / "2_scott_0_1_1.npz").parent


def shell(sandbox, tmp_path: Path, **values: str) -> Shell:
    """A user's shell in a fresh working folder under `tmp_path`, the table's fields `values`."""
    sandbox.train_encoders()  # once per session, rather than in the first launched process
    return Shell(tmp_path / "work", sandbox, **values)


def steps(test: str) -> tuple[str, ...]:
    """The documented commands `test` runs, in order (registry.WORKFLOWS)."""
    return WORKFLOWS[test]


# --- the perceptual study: render → study server → 5 participants over HTTP → export → analyze


def rating(stimuli, rng):
    def decide(page: Page) -> dict:
        if page.notice:
            return {d: asked_answer(page.notice) for d in page.dimensions}
        mean = QUALITY[stimuli[page.stimuli[0]].source]
        return {d: str(int(np.clip(mean + rng.integers(-1, 2), 1, 7))) for d in page.dimensions}

    return decide


@pytest.fixture(scope="module")
def study(sandbox, tmp_path_factory):
    """The study chain of docs/study_server.md, as written: (shell, analyze run folder)."""
    root = tmp_path_factory.mktemp("study")
    port = free_port()
    options = "study=csv study.windows.seconds=3 study.windows.splits=[test,val,train]"
    sh = shell(sandbox, root, render_options=options, port=str(port))
    sh.env[LINK_SECRET] = secrets.token_urlsafe(24)  # "Signed links"
    render, token, serve, export, analyze = steps("test_study_render_serve_export_analyze")
    ok(sh.run(render))
    sh.values["render_run"] = str(sh.runs("render")[-1])
    ok(sh.run(token))
    stimuli = read_manifest(Path(sh.values["render_run"]) / "stimuli" / "manifest.csv")
    url, rng = f"http://127.0.0.1:{port}", np.random.default_rng(0)
    server = sh.start(serve, root / "server.log")
    try:
        wait_ready(url, time.monotonic() + 300, server)
        for n in range(PARTICIPANTS):  # the signed link docs/study_server.md has them given
            pid = f"participant{n}"
            sig = {"sig": link_signature(sh.env[LINK_SECRET], pid)}
            with httpx.Client(base_url=url, timeout=60, params=sig) as client:
                assert participate(client, pid, rating(stimuli, rng)).code
        admin = {"Authorization": f"Bearer {sh.env['GESTUREBENCH_STUDY_TOKEN']}"}
        assert httpx.get(f"{url}/admin/progress", headers=admin).status_code == 200
    finally:
        server.terminate()
        server.wait(30)
    ok(sh.run(export))
    sh.values["export_run"] = str(sh.runs("study_export")[-1])
    done = sh.run(analyze)
    return sh, done


@pytest.mark.slow
def test_study_render_serve_export_analyze(study):
    """docs/study_server.md's chain: composites.json and analysis.json of 5 participants' ratings
    over HTTP, 3 s windows, the default metrics (docs/study.md's outputs)."""
    sh, done = study
    ok(done)
    run = sh.runs("analyze")[-1]
    ratings = pd.read_csv(Path(sh.values["export_run"]) / "ratings.csv")
    assert ratings["participant_id"].nunique() == PARTICIPANTS
    analysis = json.loads((run / "analysis.json").read_text())
    for key in ("options", "observations", "predictors", "quality", "table2", "figure3", "table3"):
        assert analysis[key], key
    assert {q["condition"] for q in analysis["quality"]} == {"muted", "audio"}
    composites = json.loads((run / "composites.json").read_text())["composites"]
    assert set(composites) == {"hl", "md", "ae", "st", "cm"}
    for name in ("report.md", "windows.csv", "figure3_correlations.png", "figure_composites.png"):
        assert (run / name).is_file(), name
    windows = pd.read_csv(run / "windows.csv")
    assert (windows["end"] - windows["start"]).round(6).eq(3.0).all()


@pytest.mark.slow
def test_study_composite_metric(study):
    """docs/metrics.md: an evaluation reports the study's composites as predicted ratings."""
    sh, done = study
    ok(done)
    sh.values.update(analyze_run=str(sh.runs("analyze")[-1]), model="mean_pose")
    ok(sh.run(steps("test_study_composite_metric")[0]))
    results = json.loads((sh.runs("evaluate")[-1] / "results.json").read_text())
    assert any(name.startswith("composite") for name in results["metrics"]), results["metrics"]


@pytest.mark.slow
def test_study_server_restart_entry(study):
    """docs/study_server.md, "Restarting": the restart entry on the folder the launch made serves
    the same study, its database too (the participants who took it are in its progress)."""
    sh, _ = study
    port = free_port()
    sh.values["port"] = str(port)
    server = sh.start(steps("test_study_server_restart_entry")[0], sh.root / "restart.log")
    try:
        wait_ready(f"http://127.0.0.1:{port}", time.monotonic() + 120, server)
        admin = {"Authorization": f"Bearer {sh.env['GESTUREBENCH_STUDY_TOKEN']}"}
        progress = httpx.get(f"http://127.0.0.1:{port}/admin/progress", headers=admin)
        assert all(f"participant{n}" in progress.text for n in range(PARTICIPANTS)), progress.text
    except SystemExit as failed:
        pytest.fail(f"{failed}: {(sh.root / 'restart.log').read_text()[-2000:]}")
    finally:
        server.terminate()
        server.wait(30)


@pytest.mark.slow
def test_synthetic_study(sandbox, tmp_path):
    """docs/study.md: the built-in synthetic study, with the default metrics."""
    sh = shell(sandbox, tmp_path)
    ok(sh.run(steps("test_synthetic_study")[0]))
    run = sh.runs("analyze")[-1]
    for name in ("analysis.json", "composites.json", "report.md", "ratings.csv"):
        assert (run / name).is_file(), name
    assert "fgd" in json.loads((run / "analysis.json").read_text())["options"]["predictors"]


# --- evaluation: the main job, sweeps, the leaderboard, your own model's files


@pytest.mark.slow
def test_main_job(sandbox, tmp_path):
    """README: `python launch.py` scores ground truth on mini-BEAT2 and prints the headline."""
    sh = shell(sandbox, tmp_path)
    done = ok(sh.run(steps("test_main_job")[0]))
    assert "ground_truth on mini_beat2" in done.stdout + done.stderr
    run = sh.runs("evaluate")[-1]
    results = json.loads((run / "results.json").read_text())
    assert results["metrics"]["mjd"] == 0
    assert (run / "per_sequence.csv").is_file()


@pytest.fixture(scope="module")
def swept(sandbox, tmp_path_factory):
    """README's first sweep (also docs/outputs.md's), run once for the tests that read it: (the
    shell it ran in, the sweep folder as the sweep left it, copied). The shell's cache is its own,
    so the sweep computes its intermediate values (BC's statistics, onsets, generated motion) as a
    fresh clone's first sweep does, rather than reading those the session's earlier runs cached in
    the sandbox under other settings."""
    root = tmp_path_factory.mktemp("swept")
    sh = shell(sandbox, root)
    (sh.root / ".cache").unlink()
    (sh.root / ".cache").mkdir()
    ok(sh.run(steps("test_sweeps_and_leaderboard")[0]))
    left = root / "multirun"
    shutil.copytree(sh.root / "multirun", left, symlinks=True)
    return sh, left


@pytest.mark.slow
def test_sweeps_and_leaderboard(swept):
    """README: two sweeps (each a summary.{csv,md,json,tex}, a report.html in its own folder and one
    per job), then the leaderboard of every run (Markdown, CSV and LaTeX)."""
    sh, _ = swept
    _, levels, leaderboard = steps("test_sweeps_and_leaderboard")
    summaries = sorted((sh.root / "multirun").rglob("summary.json"))
    assert summaries, "no summary.json under multirun/"
    for suffix in ("csv", "md", "tex"):
        assert summaries[0].with_suffix(f".{suffix}").is_file()
    sweep = summaries[0].parent
    (own,) = (sweep / "sweeps").iterdir()
    assert {"summary.tex", "report.html"} <= {p.name for p in own.iterdir()}
    jobs = [p.parent for p in sweep.glob("*/results.json")]
    assert len(jobs) == 3 and all((job / "report.html").is_file() for job in jobs)
    for model in ("ground\\_truth", "mean\\_pose", "random\\_clip"):
        assert model in (own / "summary.tex").read_text(), model
    assert compile_pdf(own / "summary.tex").is_file()
    ok(sh.run(levels))
    ok(sh.run(leaderboard))
    for name in ("leaderboard.md", "leaderboard.csv", "leaderboard.tex"):
        assert list((sh.root / "outputs" / "leaderboard").rglob(name)), name


def beat2_folder(root: Path) -> Path:
    """The real sample in BEAT2's layout (train_test_split.csv, smplxflame_30/, wave16k/)."""
    folder = root / "beat_english_v2.0.0"
    for sub in ("smplxflame_30", "wave16k"):
        (folder / sub).mkdir(parents=True)
    shutil.copy(sample() / "2_scott_0_1_1.npz", folder / "smplxflame_30")
    shutil.copy(sample() / "2_scott_0_1_1.wav", folder / "wave16k")
    (folder / "train_test_split.csv").write_text("id,type\n2_scott_0_1_1,test\n")
    return folder


#: a transcript for the sample, which ships none: BEAT2's TextGrids hold each sequence's words
WORDS = [
    "so",
    "I",
    "think",
    "the",
    "most",
    "important",
    "thing",
    "when",
    "you",
    "travel",
    "is",
    "to",
    "meet",
    "new",
    "people",
]


def with_train_split(folder: Path) -> Path:
    """`folder` (`beat2_folder`) with train and val splits too, which the default metrics read
    (BC's speed normaliser, SC's encoder training): the sample again, as other recordings of its
    speaker; and with a transcript for each (`textgrid/`, words every 0.45 s), which SC and its
    encoder's training read."""
    for seq, split in (("2_scott_0_2_2", "train"), ("2_scott_0_3_3", "val")):
        for sub, ext in (("smplxflame_30", "npz"), ("wave16k", "wav")):
            shutil.copy(folder / sub / f"2_scott_0_1_1.{ext}", folder / sub / f"{seq}.{ext}")
        with open(folder / "train_test_split.csv", "a") as rows:
            rows.write(f"{seq},{split}\n")
    seconds = sf.info(folder / "wave16k" / "2_scott_0_1_1.wav").duration
    starts = np.arange(0.5, seconds - 1.0, 0.45)
    words = [Word(WORDS[i % len(WORDS)], t, t + 0.3) for i, t in enumerate(starts)]
    for npz in (folder / "smplxflame_30").glob("*.npz"):
        write_textgrid_words(folder / "textgrid" / f"{npz.stem}.TextGrid", words, seconds)
    return folder


def fetched_shell(sandbox, root: Path, beat2_root: Path, fetch: str) -> Shell:
    """A user's shell with checkpoints of its own after docs/cluster.md's setup step `fetch`
    (`task=fetch` on dataset=beat2 with the default metrics) against a local fake Hub and GitHub
    serving the production table's EMAGE evaluation files (the FGD encoder seeded in the released
    layout, the BC normaliser's real pinned bytes); the shell then offline, the Hub out of reach.
    A failed fetch is a RuntimeError (the workflow's own steps fail by assertion)."""
    from tests.support.fake_hub import FakeHub, serve_emage_eval
    from tests.support.requires import EMAGE_DIR

    mean_speed = require_shared(EMAGE_DIR / "mean_vel_smplxflame_30.npy")
    hub = FakeHub().start()
    try:
        serve_emage_eval(hub, mean_speed)
        sh = _fetch_shell(
            sandbox,
            root,
            beat2_root,
            HF_HUB_OFFLINE="0",
            HF_ENDPOINT=hub.url,
            GESTUREBENCH_GITHUB_ENDPOINT=hub.github_url,
        )
        done = sh.run(fetch)
        if done.returncode != 0:
            raise RuntimeError(f"{fetch}: exit {done.returncode}\n{done.stderr[-3000:]}")
    finally:
        hub.stop()
    sh.env.update(HF_HUB_OFFLINE="1", HF_ENDPOINT="http://127.0.0.1:9")
    return sh


@pytest.fixture(scope="module")
def beat2_ready(sandbox, tmp_path_factory):
    """docs/cluster.md's setup of a BEAT2 folder (the sample, `with_train_split`), once for the
    tests that score it: `task=fetch` of the public files a BEAT2 run needs, then the training of
    SC's encoder on its train split; (the shell, the BEAT2 folder)."""
    root = tmp_path_factory.mktemp("beat2")
    beat2 = with_train_split(beat2_folder(root))
    fetch, train, _ = steps("test_your_own_models_files")
    assert steps("test_study_on_beat2")[:2] == (fetch, train)
    sh = fetched_shell(sandbox, root, beat2, fetch)
    ok(sh.run(train))
    return sh, beat2


@pytest.mark.slow
def test_your_own_models_files(beat2_ready, tmp_path):
    """README, "Your own model": a folder of result files, one per test sequence, on BEAT2 (after
    docs/cluster.md's `task=fetch` of the public files a BEAT2 run needs and its training of SC's
    encoder on the train split: `beat2_ready`)."""
    sh, beat2 = beat2_ready
    mine = tmp_path / "mymodel"
    mine.mkdir()
    shutil.copy(beat2 / "smplxflame_30" / "2_scott_0_1_1.npz", mine)
    scored = steps("test_your_own_models_files")[2]
    sh.values["model_dir"] = str(mine)
    ok(sh.run(scored))
    results = json.loads((sh.runs("evaluate")[-1] / "results.json").read_text())
    assert results["metrics"]["mjd"] == 0


# --- the rest: render, annotate, the API, a metric of your own


@pytest.mark.slow
def test_render(sandbox, tmp_path):
    """docs/rendering.md: the synthetic study's stimuli, muted and with audio, and the manifest."""
    sh = shell(sandbox, tmp_path)
    ok(sh.run(steps("test_render")[0]))
    stimuli = sh.runs("render")[-1] / "stimuli"
    manifest = pd.read_csv(stimuli / "manifest.csv")
    assert set(manifest["condition"]) == {"muted", "audio"}
    assert all((stimuli / f).is_file() for f in manifest["file"])
    assert (stimuli / "windows.csv").is_file()


@pytest.mark.slow
def test_annotate(sandbox, tmp_path):
    """docs/annotation.md: the offline kinematic annotator on mini-BEAT2."""
    sh = shell(sandbox, tmp_path)
    ok(sh.run(steps("test_annotate")[0]))
    counts = json.loads((sh.runs("annotate")[-1] / "annotate.json").read_text())
    assert counts["events"] > 0, counts


@pytest.mark.slow
def test_api(sandbox, tmp_path):
    """docs/api.md: the example program, as a file run by python in the working folder."""
    sh = shell(sandbox, tmp_path)
    done = ok(sh.program(steps("test_api")[0]))
    assert "mjd" in done.stdout


@pytest.mark.slow
def test_custom_metric(sandbox, tmp_path):
    """docs/metrics.md: a metric added on the command line with its own name and threshold."""
    sh = shell(sandbox, tmp_path)
    ok(sh.run(steps("test_custom_metric")[0]))
    results = json.loads((sh.runs("evaluate")[-1] / "results.json").read_text())
    assert "pck_5cm" in results["metrics"]


@pytest.mark.slow
def test_beat_collapse_sgp(sandbox, tmp_path):
    """docs/metrics.md: SGP of beat_collapse at three levels, a sweep with only that metric."""
    sh = shell(sandbox, tmp_path)
    ok(sh.run(steps("test_beat_collapse_sgp")[0]))
    results = sorted((sh.root / "multirun").rglob("results.json"))
    assert len(results) == 3
    for path in results:
        assert "sgp" in json.loads(path.read_text())["metrics"], path


# --- real BEAT2: the check, a study of its windows; a config folder of your own


@pytest.mark.slow
def test_prepare_beat2(sandbox, tmp_path):
    """docs/data.md: the check of a BEAT2 folder writes its report."""
    sh = shell(sandbox, tmp_path, beat2_root=str(beat2_folder(tmp_path)))
    sh.run(steps("test_prepare_beat2")[0])  # a partial copy: the report says what is missing
    run = sh.runs("prepare_beat2")[-1]
    assert (run / "beat2_report.md").is_file() and (run / "beat2_report.json").is_file()


@pytest.mark.slow
def test_user_config_folder(sandbox, tmp_path, mini_beat2):
    """docs/bring_your_model.md: docs' my_model.yaml in a config folder of the user's, its `dir`
    holding result files (mini-BEAT2's own test motion)."""
    outputs = tmp_path / "my_model_outputs"
    outputs.mkdir()
    split = pd.read_csv(mini_beat2 / "train_test_split.csv")
    for sid in split[split["type"] == "test"]["id"]:
        shutil.copy(mini_beat2 / "smplxflame_30" / f"{sid}.npz", outputs)
    conf = tmp_path / "gb_conf"
    (conf / "model").mkdir(parents=True)
    yaml = yaml_block("docs/bring_your_model.md", "# conf/model/my_model.yaml")
    (conf / "model" / "my_model.yaml").write_text(fill(yaml, {"my_model_dir": str(outputs)}))
    sh = shell(sandbox, tmp_path, conf_dir=str(conf))
    ok(sh.run(steps("test_user_config_folder")[0]))
    results = json.loads((sh.runs("evaluate")[-1] / "results.json").read_text())
    assert results["metrics"]["mjd"] == 0


@pytest.mark.slow
def test_pairwise_study(sandbox, tmp_path):
    """docs/study_server.md, "Pairwise mode": the analysis of a pairwise export (written here in
    the export's columns) writes pairwise_elo.csv and analysis.json."""
    rows, rng = [], np.random.default_rng(0)
    sources = list(QUALITY)
    for n in range(6):
        condition = ("muted", "audio")[n % 2]
        dimensions = ("hl", "md", "ae") if condition == "muted" else ("st", "cm")
        for a in range(len(sources)):
            for b in range(a + 1, len(sources)):
                for d in dimensions:
                    better = QUALITY[sources[a]] - QUALITY[sources[b]] + rng.normal()
                    winner = "a" if better > 0.5 else "b" if better < -0.5 else "tie"
                    rows.append([f"p{n}", condition, "s1", d, sources[a], sources[b], winner, ""])
        rows.append([f"p{n}", condition, "", "attention", "", "", "", "true"])
    columns = "participant_id,condition,sequence_id,dimension,source_a,source_b,winner,passed"
    export = tmp_path / "export"
    export.mkdir()
    pd.DataFrame(rows, columns=columns.split(",")).to_csv(export / "pairwise.csv", index=False)
    sh = shell(sandbox, tmp_path, export_run=str(export))
    ok(sh.run(steps("test_pairwise_study")[0]))
    run = sh.runs("analyze")[-1]
    elo = pd.read_csv(run / "pairwise_elo.csv")
    assert set(elo["source"]) == set(sources)
    assert (run / "analysis.json").is_file()


@pytest.mark.slow
def test_study_on_beat2(beat2_ready, tmp_path):
    """docs/study.md: a ratings file of the csv study's sources on real BEAT2 (the sample's
    sequence, its configured window), after docs/cluster.md's `task=fetch` of the public files a
    BEAT2 run needs and its training of SC's encoder (`beat2_ready`)."""
    sh, _ = beat2_ready
    rows = []
    for n, condition in enumerate(["muted", "audio"] * 2):
        for source, quality in QUALITY.items():
            for d in ("hl", "md", "ae") if condition == "muted" else ("st", "cm"):
                rows.append([f"p{n}", condition, source, "2_scott_0_1_1", d, quality, ""])
        rows.append([f"p{n}", condition, "", "", "attention", "", "true"])
    columns = [c for c in COLUMNS if c not in ("start", "end")]
    ratings = tmp_path / "ratings.csv"
    pd.DataFrame(rows, columns=columns).to_csv(ratings, index=False)
    analyze = steps("test_study_on_beat2")[2]
    sh.values["ratings"] = str(ratings)
    ok(sh.run(analyze))
    assert (sh.runs("analyze")[-1] / "analysis.json").is_file()


def _fetch_shell(sandbox, root: Path, beat2_root: Path, **env: str) -> Shell:
    """A user's shell with checkpoints of its own (not the session's) and `env` (no encoders: a
    fetch trains none)."""
    sh = Shell(root / "work", sandbox, beat2_root=str(beat2_root))
    (sh.root / "checkpoints").unlink()
    (sh.root / "checkpoints").mkdir()
    sh.env.update(env)
    return sh


@pytest.mark.slow
def test_fetch_bundle_and_install_offline(sandbox, tmp_path):
    """docs/models.md and docs/cluster.md: task=fetch against a local fake Hub and GitHub (a
    seeded table in the production table's tags as GESTUREBENCH_ASSET_TABLE), the bundle written
    on the connected machine and installed on a node without network; the run's check then finds
    nothing missing there."""
    from gesturebench.assets.table import load_table
    from gesturebench.tasks.fetch import AssetScope, check_assets
    from tests.helpers import composed
    from tests.support.fake_hub import FakeHub, workflow_table, write_table

    hub = FakeHub().start()
    try:
        assets = workflow_table(hub)
        table = write_table(assets, tmp_path / "table.json")
        online_root = tmp_path / "online_beat2" / "beat_english_v2.0.0"
        sh = _fetch_shell(
            sandbox,
            tmp_path / "online",
            online_root,
            HF_HUB_OFFLINE="0",
            HF_ENDPOINT=hub.url,
            GESTUREBENCH_GITHUB_ENDPOINT=hub.github_url,
            GESTUREBENCH_ASSET_TABLE=str(table),
        )
        models, bundle, install = steps("test_fetch_bundle_and_install_offline")
        first = sh.run(models)  # the models' and genea's files; no dataset: no vocab
        ok(first)
        assert "unpinned: hash recorded on first fetch" in first.stdout + first.stderr
        checkpoints = sh.root / "checkpoints"
        assert sorted(p.name for p in (checkpoints / "fetchtest").iterdir()) == [
            "bc.bin",
            "emage.bin",
            "fgd.bin",
            "gesturelsm.bin",
        ]
        ok(sh.run(bundle))
        assert (online_root / "weights" / "vocab.pkl").read_bytes() == hub.files[
            ("owner/vocab", hub.main["owner/vocab"], "vocab.bin")
        ]
        node_root = tmp_path / "node_beat2" / "beat_english_v2.0.0"
        node = _fetch_shell(
            sandbox,
            tmp_path / "node",
            node_root,
            HF_HUB_OFFLINE="1",
            HF_ENDPOINT="http://127.0.0.1:9",
            GESTUREBENCH_GITHUB_ENDPOINT="http://127.0.0.1:9",
            GESTUREBENCH_ASSET_TABLE=str(table),
        )
    finally:
        hub.stop()
    shutil.copy(sh.root / "assets.tar", node.root / "assets.tar")
    ok(node.run(install))
    for asset in assets:
        root = node_root if asset.root == "dataset" else node.root / "checkpoints"
        mine = (online_root if asset.root == "dataset" else checkpoints) / asset.dest
        assert (root / asset.dest).read_bytes() == mine.read_bytes()
    cfg = composed(
        "dataset=beat2",
        f"dataset.root={node_root}",
        "metrics=genea",
        "model=gesturelsm",
        f"paths.checkpoints={node.root / 'checkpoints'}",
    )
    check_assets(AssetScope.of(cfg), table=load_table(table))


@pytest.mark.slow
def test_verify_a_sweep(swept, sandbox, tmp_path):
    """docs/outputs.md, "Verifying a run": a sweep's three jobs (`swept`: the README's sweep, its
    folder as the sweep left it), then `task=verify` on its folder, in a working folder with an
    empty cache, re-runs each into its own run folder and finds every value identical (exit 0);
    the jobs' folders are only read."""
    sweep, verify = steps("test_verify_a_sweep")
    assert sweep == steps("test_sweeps_and_leaderboard")[0]  # the sweep `swept` ran
    sh = shell(sandbox, tmp_path)
    (sh.root / ".cache").unlink()
    (sh.root / ".cache").mkdir()  # the re-run computes its intermediate values anew
    shutil.copytree(swept[1], sh.root / "multirun", symlinks=True)
    jobs = sorted((sh.root / "multirun" / "evaluate" / "mini_beat2").rglob("results.json"))
    assert len(jobs) == 3
    before = {p: p.read_bytes() for p in jobs}
    done = ok(sh.run(verify))
    report = json.loads((sh.runs("verify")[-1] / "verify.json").read_text())
    assert report["exit_code"] == 0 and [r["results"] for r in report["runs"]] == [
        str(p.relative_to(sh.root)) for p in jobs
    ]
    for run in report["runs"]:
        assert run["values"] and {row["status"] for row in run["values"]} == {"identical"}
        assert run["rerun"] and Path(sh.root / run["rerun"], "results.json").is_file()
    assert "identical" in done.stdout
    assert {p: p.read_bytes() for p in jobs} == before
