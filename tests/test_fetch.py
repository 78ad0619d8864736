"""`task=fetch` against a local fake Hub and GitHub (tests/support/fake_hub.py), the real
huggingface_hub client and requests: fresh, resumed, corrupted, wrong revision, bundles, a
read-only target, an interrupted download; what a configuration needs and the one-line check; the
shape of the production table."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tarfile
from pathlib import Path

import pytest

from gesturebench.assets.fetch import (
    LOCK,
    STAGING,
    UNPINNED,
    Fetcher,
    Placed,
    Request,
    check_body_model,
    fetch_assets,
    install_bundle,
    place,
)
from gesturebench.assets.table import COMMIT, TABLE, Table, load_table
from gesturebench.encoders.text_model import MINILM
from gesturebench.metrics.emage_eval_files import FGD_ENCODER, MEAN_SPEED
from gesturebench.models.emage.release import RELEASE
from gesturebench.models.gesturelsm.config import Variant
from gesturebench.models.gesturelsm.weights import MEAN_STD_FILES, UNRELEASED, release_files
from gesturebench.runtime.errors import CheckpointError, ConfigError
from gesturebench.runtime.weights import HubFiles, resolve_weights
from gesturebench.tasks.fetch import (
    AssetScope,
    FetchTask,
    assets_for,
    check_assets,
    missing_assets,
    named_models,
)
from gesturebench.tasks.job import Job
from tests.helpers import composed
from tests.launch import error_line, stopped
from tests.support.fake_hub import FakeHub, seeded_table, with_changes, write_table
from tests.support.requires import EMAGE_DIR, require_shared


@pytest.fixture
def hub(monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    server = FakeHub().start()
    yield server
    server.stop()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _served(hub: FakeHub, asset) -> bytes:
    if asset.host == "github":
        return hub.github[(asset.repo, asset.revision, asset.path)]
    prefix = {"model": "", "dataset": "datasets/", "space": "spaces/"}[asset.repo_type]
    repo = prefix + asset.repo
    return hub.files[(repo, asset.revision or hub.main[repo], asset.path)]


def _fetch(hub: FakeHub, assets, checkpoints: Path, job: Job, bundle: Path | None = None) -> dict:
    """`task=fetch`'s fetch of `assets` into `checkpoints` from `hub`."""
    request = Request(
        Table(tuple(assets), "test"),
        checkpoints,
        needs=[(a, None) for a in assets],
        bundle=bundle,
    )
    fetcher = Fetcher(hub.url, hub.github_url, progress=False)
    return fetch_assets(request, fetcher, job.run_dir / "fetch.json")


def _placed(assets, checkpoints: Path) -> list[Placed]:
    return [p for a in assets if (p := place(a, checkpoints, None)) is not None]


def _finals(checkpoints: Path) -> set[str]:
    """Files under `checkpoints` outside the staging folder and the lock file."""
    return {
        str(p.relative_to(checkpoints))
        for p in checkpoints.rglob("*")
        if p.is_file() and STAGING not in p.parts and p.name != LOCK
    }


def test_fresh_fetch_installs_every_file_verified_and_records_the_unpinned(hub, tmp_path, caplog):
    assets = seeded_table(hub)
    checkpoints, job = tmp_path / "checkpoints", Job(run_dir=tmp_path / "run")
    job.run_dir.mkdir()
    caplog.set_level("INFO")
    document = _fetch(hub, assets, checkpoints, job)
    for asset in assets:
        assert _sha((checkpoints / asset.dest).read_bytes()) == _sha(_served(hub, asset))
    lock = json.loads((checkpoints / LOCK).read_text())
    assert {k: v["sha256"] for k, v in lock.items()} == {
        a.key: _sha(_served(hub, a)) for a in assets
    }
    unpinned = [a.key for a in assets if not a.pinned]
    assert [f"{k}: {UNPINNED}" in caplog.text for k in unpinned] == [True] * len(unpinned)
    # an unpinned revision is resolved once and recorded: the commit main pointed at
    assert lock["m/sub/w.bin"]["revision"] == hub.main["owner/model"]
    total = sum(len(_served(hub, a)) for a in assets)  # the table's sizes, else the server's
    assert f"4 of 4 files to fetch ({total / 1000:.1f} kB), 0 already there" in caplog.text
    assert json.loads((job.run_dir / "fetch.json").read_text())["files"] == document["files"]
    # a second fetch downloads nothing and finds every file present with the same hash
    gets = sum(1 for m, *_ in hub.requests if m == "GET")
    again = _fetch(hub, assets, checkpoints, job)
    assert sum(1 for m, *_ in hub.requests if m == "GET") == gets
    assert {f["status"] for f in again["files"]} == {"present"}


@pytest.mark.parametrize("key", ["m/config.json", "ev/speed.npy"])
def test_an_interrupted_download_leaves_nothing_complete_and_resumes(hub, tmp_path, key):
    """A transfer cut halfway (the Hub's through huggingface_hub, GitHub's through requests):
    one line, no file under its final name, the asset still missing; the next fetch asks for the
    rest only (Range) and installs the verified file."""
    assets = seeded_table(hub)
    asset = next(a for a in assets if a.key == key)
    checkpoints, job = tmp_path / "checkpoints", Job(run_dir=tmp_path)
    hub.cut[asset.path] = 30_000
    with pytest.raises(CheckpointError) as err:
        _fetch(hub, [asset], checkpoints, job)
    assert "\n" not in str(err.value) and "rerun to resume" in str(err.value)
    assert _finals(checkpoints) == set()
    assert missing_assets(_placed([asset], checkpoints)) == _placed([asset], checkpoints)
    hub.heal()
    _fetch(hub, [asset], checkpoints, job)
    assert (checkpoints / asset.dest).read_bytes() == _served(hub, asset)
    ranges = [r for m, path, r in hub.requests if m == "GET" and path.endswith(asset.path) and r]
    assert len(ranges) == 1 and 30_000 - 8192 <= int(re.findall(r"\d+", ranges[0])[0]) <= 30_000


def test_a_corrupted_download_is_refused_with_one_line_and_nothing_installed(hub, tmp_path):
    assets = seeded_table(hub)
    pinned = [a for a in assets if a.pinned and a.host == "hub"]
    checkpoints, job = tmp_path / "checkpoints", Job(run_dir=tmp_path)
    hub.corrupt.add(pinned[0].path)
    with pytest.raises(CheckpointError) as err:
        _fetch(hub, pinned[:1], checkpoints, job)
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{pinned[0].key}: SHA-256 ")
    assert "refused, nothing installed" in message and pinned[0].sha256[:16] in message
    assert _finals(checkpoints) == set()
    assert not [p for p in checkpoints.rglob("*") if p.is_file() and p.name == "config.json"]


def test_an_unpinned_file_is_held_to_its_first_hash(hub, tmp_path):
    assets = seeded_table(hub)
    unpinned = next(a for a in assets if not a.pinned)
    checkpoints, job = tmp_path / "checkpoints", Job(run_dir=tmp_path)
    _fetch(hub, [unpinned], checkpoints, job)
    (checkpoints / unpinned.dest).unlink()
    hub.corrupt.add(unpinned.path)  # another file at the same place on a later fetch
    with pytest.raises(CheckpointError, match="differs from the expected"):
        _fetch(hub, [unpinned], checkpoints, job)
    assert not (checkpoints / unpinned.dest).exists()


def test_a_wrong_revision_or_file_is_refused_with_one_line(hub, tmp_path):
    assets = seeded_table(hub)
    checkpoints, job = tmp_path / "checkpoints", Job(run_dir=tmp_path)
    wrong = with_changes(assets[0], revision="f" * 40)
    with pytest.raises(CheckpointError) as err:
        _fetch(hub, [wrong], checkpoints, job)
    assert str(err.value).startswith(f"m/config.json: revision {'f' * 40} not found in owner/model")
    gone = with_changes(assets[0], path="nowhere.json")
    with pytest.raises(CheckpointError, match=r"nowhere\.json not found in owner/model"):
        _fetch(hub, [gone], checkpoints, job)
    assert _finals(checkpoints) == set()


def test_bundle_round_trip_then_the_resolver_finds_the_files_offline(hub, tmp_path, monkeypatch):
    assets = seeded_table(hub)
    table = Table(tuple(assets), "test")
    online, job = tmp_path / "online", Job(run_dir=tmp_path)
    bundle = tmp_path / "assets.tar"
    _fetch(hub, assets, online, job, bundle)
    with tarfile.open(bundle) as tar:
        manifest = json.loads(tar.extractfile("manifest.json").read())
        names = set(tar.getnames())
    assert {f["path"] for f in manifest["files"]} == {f"checkpoints/{a.dest}" for a in assets}
    assert names == {"manifest.json", *(f"checkpoints/{a.dest}" for a in assets)}
    assert {f["key"]: f["sha256"] for f in manifest["files"]} == {
        a.key: _sha(_served(hub, a)) for a in assets
    }
    # the cluster node: no network at all
    from huggingface_hub import constants

    hub.stop()
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    node = tmp_path / "node"
    installed = install_bundle(bundle, table, node, None)
    assert len(installed) == len(assets)
    for asset in assets:
        assert (node / asset.dest).read_bytes() == (online / asset.dest).read_bytes()
    spec = HubFiles("owner/model", ("config.json", "sub/w.bin"), "m")
    got = resolve_weights(spec, None, node, owner="model=m", key="model.weights")
    assert got.source == "checkpoints"
    assert got.sha256["sub/w.bin"] == _sha((online / "m/sub/w.bin").read_bytes())
    hub.start()  # the fixture stops it again


def _rewrite(bundle: Path, out: Path, change) -> Path:
    """A copy of `bundle` with `change(name, data) -> (name, data)` applied to each member."""
    with tarfile.open(bundle) as src, tarfile.open(out, "w") as dst:
        for member in src.getmembers():
            name, data = change(member.name, src.extractfile(member).read())
            info = tarfile.TarInfo(name)
            info.size = len(data)
            import io

            dst.addfile(info, io.BytesIO(data))
    return out


def test_a_tampered_or_escaping_bundle_is_refused(hub, tmp_path):
    assets = seeded_table(hub)
    table = Table(tuple(assets), "test")
    online, job, bundle = tmp_path / "online", Job(run_dir=tmp_path), tmp_path / "a.tar"
    _fetch(hub, assets, online, job, bundle)
    flipped = _rewrite(
        bundle,
        tmp_path / "flipped.tar",
        lambda n, d: (n, d if n == "manifest.json" or not n.endswith("speed.npy") else d[::-1]),
    )
    with pytest.raises(CheckpointError, match=r"ev/speed\.npy: SHA-256 .* refused"):
        install_bundle(flipped, table, tmp_path / "node1", None)
    assert not (tmp_path / "node1" / "ev" / "speed.npy").exists()

    def escape(name: str, data: bytes) -> tuple[str, bytes]:
        if name == "manifest.json":
            files = json.loads(data)
            files["files"][0]["path"] = "checkpoints/../../escaped"
            return name, json.dumps(files).encode()
        return name, data

    with pytest.raises(ConfigError, match=r"is stored as checkpoints/\.\./\.\./escaped"):
        install_bundle(_rewrite(bundle, tmp_path / "e.tar", escape), table, tmp_path / "n2", None)
    assert not (tmp_path / "escaped").exists()


def _as_emage(hub: FakeHub):
    """The seeded table with its model's assets needed by model=emage."""
    return [
        with_changes(a, needed_by=(a.needed_by[0].replace("model=m", "model=emage"),))
        for a in seeded_table(hub)
    ]


def test_a_read_only_target_is_one_line_exit_2(hub, tmp_path, capsys, monkeypatch):
    assets = _as_emage(hub)
    monkeypatch.setenv("GESTUREBENCH_ASSET_TABLE", str(write_table(assets, tmp_path / "t.json")))
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    if os.geteuid() == 0:  # root writes through permissions: a file system that refuses folders
        target = Path("/sys/gesturebench-fetch")
    else:
        target = tmp_path / "ro"
        target.mkdir()
        target.chmod(0o555)
    stop = stopped(capsys, "task=fetch", "model=emage", f"paths.checkpoints={target}")
    assert error_line(stop).startswith(f"error: paths.checkpoints={target}: not writable (")
    assert not [m for m, *_ in hub.requests if m == "GET"]


def test_task_fetch_from_the_command_line_then_check_passes(hub, tmp_path, capsys, monkeypatch):
    """The task as launch.py runs it, on a test table: the plan, the files, the summary; the
    run's check then finds nothing missing."""
    assets = _as_emage(hub)
    monkeypatch.setenv("GESTUREBENCH_ASSET_TABLE", str(write_table(assets, tmp_path / "t.json")))
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("GESTUREBENCH_GITHUB_ENDPOINT", hub.github_url)
    checkpoints = tmp_path / "checkpoints"
    overrides = ("model=emage", "metrics=genea", f"paths.checkpoints={checkpoints}")
    cfg = composed(*overrides)
    table = load_table(tmp_path / "t.json")
    with pytest.raises(CheckpointError) as err:
        check_assets(AssetScope.of(cfg), overrides, table)
    assert str(err.value) == (
        f"4 public files this run needs are missing, the first {checkpoints / 'm/config.json'}"
        f" (m/config.json, for model=emage); get them all: python launch.py task=fetch"
        f" model=emage metrics=genea paths.checkpoints={checkpoints}"
    )
    from tests.launch import run

    document = run("task=fetch", "task.progress=false", *overrides, encoders=False)
    assert {f["status"] for f in document["files"]} == {"fetched", "fetched, hash recorded"}
    check_assets(AssetScope.of(cfg), overrides, table)
    assert _finals(checkpoints) == {a.dest for a in assets}


# --- what a configuration needs --------------------------------------------------------------


def _keys(cfg, **kw) -> set[str]:
    return {p.asset.key for p in assets_for(AssetScope.of(cfg), **kw)}


def test_what_each_configuration_needs():
    beat2 = ("dataset=beat2", "dataset.root=/d/beat_english_v2.0.0")
    lsm = composed(*beat2, "metrics=genea", "model=gesturelsm", "paths.checkpoints=/c")
    placed = {p.asset.key: p.path for p in assets_for(AssetScope.of(lsm))}
    assert set(placed) == {
        "gesturelsm/shortcut_reflow.bin",
        *(f"gesturelsm/net_300000_{p}.pth" for p in ("upper", "hands", "lower")),
        *(f"gesturelsm/mean_std/{n}" for n in MEAN_STD_FILES.values()),
        "beat2/weights/vocab.pkl",
        "emage_eval/AESKConv_240_100.bin",
        "emage_eval/mean_vel_smplxflame_30.npy",
    }
    assert placed["beat2/weights/vocab.pkl"] == Path("/d/beat_english_v2.0.0/weights/vocab.pkl")
    mine = composed(*beat2, "model=gesturelsm", "model.mean_std=/m", "model.variant=diffusion")
    placed = {p.asset.key: p.path for p in assets_for(AssetScope.of(mine))}
    assert placed["gesturelsm/mean_std/beatx_2_330_std.npy"] == Path("/m/beatx_2_330_std.npy")
    assert "gesturelsm/new_540_diffusion.bin" in placed
    assert "gesturelsm/shortcut_reflow.bin" not in placed
    # configured weights are the user's: not fetched; mini-BEAT2 builds its own vocab
    emage = _keys(composed("model=emage", "model.weights=/w", "metrics=genea"))
    assert emage == {"emage_eval/AESKConv_240_100.bin", "emage_eval/mean_vel_smplxflame_30.npy"}
    assert _keys(composed("model=gesturelsm")) & {"beat2/weights/vocab.pkl"} == set()
    assert _keys(composed()) == set()  # the main command needs no public file
    named = named_models(["emage", "gesturelsm"], ["paths.checkpoints=/c", "model=mean_pose"])
    assert [str(m.mean_std) for m in named[1:]] == ["/c/gesturelsm/mean_std"]
    both = _keys(composed("metrics=genea"), models=named)
    assert {a.key for a in TABLE if "model=emage" in a.needed_by} <= both
    assert "gesturelsm/shortcut_reflow.bin" in both
    everything = {a.key for a in TABLE if a.root == "checkpoints"}
    assert _keys(composed(), everything=True) == everything  # no dataset root on mini-BEAT2
    assert _keys(composed(*beat2), everything=True) == {a.key for a in TABLE}


def test_the_check_names_every_missing_file_at_once(tmp_path):
    cfg = composed("model=gesturelsm", "metrics=genea", f"paths.checkpoints={tmp_path}")
    with pytest.raises(CheckpointError) as err:
        check_assets(AssetScope.of(cfg), ("model=gesturelsm", "metrics=genea", "trainer=gpu"))
    message = str(err.value)
    needed = assets_for(AssetScope.of(cfg))
    assert message.startswith(f"{len(needed)} public files this run needs are missing, the first")
    assert message.endswith(
        "get them all: python launch.py task=fetch model=gesturelsm metrics=genea"
    )
    assert "\n" not in message


# --- the production table --------------------------------------------------------------------


def test_the_production_table_has_every_file_the_resolvers_read_where_they_read_it():
    dests = {a.dest for a in TABLE if a.root == "checkpoints"}
    specs = [RELEASE, FGD_ENCODER, MEAN_SPEED, MINILM]
    specs += [release_files(v) for v in Variant if v not in UNRELEASED]
    assert [
        f"{s.folder}/{n}" for s in specs for n in s.files if f"{s.folder}/{n}" not in dests
    ] == []
    assert {f"gesturelsm/mean_std/{n}" for n in MEAN_STD_FILES.values()} <= dests
    assert len({a.key for a in TABLE}) == len(TABLE)
    for asset in TABLE:
        assert asset.revision is None or COMMIT.match(asset.revision), asset
        assert asset.sha256 is None or re.fullmatch(r"[0-9a-f]{64}", asset.sha256), asset
        assert asset.needed_by and asset.licence, asset
        assert asset.pinned or asset.note, asset  # an unknown hash says why


def test_the_pinned_bc_normaliser_is_the_real_file():
    real = require_shared(EMAGE_DIR / "mean_vel_smplxflame_30.npy").read_bytes()
    (asset,) = [a for a in TABLE if a.key == "emage_eval/mean_vel_smplxflame_30.npy"]
    assert (asset.sha256, asset.size) == (_sha(real), len(real))


# --- BEAT2 opt-in, SMPL-X by hand --------------------------------------------------------------


def test_with_dataset_reuses_prepare_beat2s_download(monkeypatch, tmp_path):
    from gesturebench.tasks.prepare_beat2 import PrepareBeat2Task

    calls = []
    monkeypatch.setattr(PrepareBeat2Task, "fetch", lambda self, root, dl: calls.append(root))
    root = tmp_path / "beat_english_v2.0.0"
    cfg = composed("dataset=beat2", f"dataset.root={root}", f"paths.checkpoints={tmp_path}")
    FetchTask(with_dataset=True)._dataset(AssetScope.of(cfg).dataset_root)
    assert calls == [root]
    with pytest.raises(ConfigError, match=r"^task\.with_dataset=true needs dataset=beat2"):
        FetchTask(with_dataset=True)._dataset(AssetScope.of(composed()).dataset_root)


def test_smplx_is_checked_not_fetched(tmp_path, caplog):
    caplog.set_level("INFO")
    check_body_model(AssetScope.of(composed()).body_model_path)
    assert "register at https://smpl-x.is.tue.mpg.de" in caplog.text
    model = tmp_path / "SMPLX_NEUTRAL_2020.npz"
    model.write_bytes(b"not the real model")
    check_body_model(AssetScope.of(composed(f"body_model.model_path={model}")).body_model_path)
    assert f"SHA-256 {_sha(b'not the real model')}; no official SHA-256" in caplog.text
    with pytest.raises(ConfigError, match=r"^body_model\.model_path=.*nowhere\.npz: not found"):
        nowhere = composed(f"body_model.model_path={tmp_path / 'nowhere.npz'}")
        check_body_model(AssetScope.of(nowhere).body_model_path)


def test_the_classes_declare_what_they_need_not_their_names():
    """A renamed EMAGE model still needs EMAGE's files (its class declares them); a metric
    whose class declares none needs none, whatever its options are called."""
    emage = {a.key for a in TABLE if "model=emage" in a.needed_by}
    assert emage <= _keys(composed("model=emage", "model.name=my_emage"))
    mjd = "+metrics.mjd._target_=gesturebench.metrics.mjd.MeanJointDistance"
    assert _keys(composed("metrics=none", mjd, "+metrics.mjd.encoder=emage")) == set()
