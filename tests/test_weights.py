"""Weight resolution: configured folder, then checkpoints/, then the Hub; one line when missing,
for every model of conf/model/."""

import hashlib

import numpy as np
import pytest

from gesturebench.encoders.text_model import MINILM
from gesturebench.metrics.emage_eval_files import FGD_ENCODER, MEAN_SPEED
from gesturebench.models.emage.release import RELEASE
from gesturebench.models.gesturelsm.config import Variant
from gesturebench.models.gesturelsm.weights import MEAN_STD_FILES, UNRELEASED, release_files
from gesturebench.run.config import build_model
from gesturebench.runtime.errors import CheckpointError
from gesturebench.runtime.weights import HubFiles, resolve_weights
from tests.helpers import CONF, REPO, composed
from tests.support.hf_cache import fake_hf_cache

SPEC = HubFiles("owner/model", ("config.json", "sub/weights.bin"), "model", docs="docs/x.md")
#: who needs the weights and the key that sets their path, as a caller names them
WHO = {"owner": "model=m", "key": "model.weights"}


def _fill(root, names=SPEC.files, payload=b"w"):
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(payload + name.encode())


def _no_download(**kwargs):
    raise AssertionError(f"downloaded although the files were there: {kwargs}")


def test_configured_folder_wins_and_hashes_every_file(tmp_path):
    configured, ckpt = tmp_path / "mine", tmp_path / "checkpoints"
    _fill(configured)
    _fill(ckpt / "model", payload=b"other")
    got = resolve_weights(SPEC, configured, ckpt, download=_no_download, **WHO)
    assert (got.root, got.source) == (configured, "configured")
    expected = hashlib.sha256(b"wsub/weights.bin").hexdigest()
    assert got.sha256["sub/weights.bin"] == expected
    assert got.info()["weights_source"] == "configured"


def test_configured_folder_missing_a_file_is_one_line(tmp_path):
    _fill(tmp_path, names=("config.json",))
    with pytest.raises(CheckpointError) as err:
        resolve_weights(SPEC, tmp_path, tmp_path / "checkpoints", download=_no_download, **WHO)
    assert str(err.value) == (
        f"model=m: model.weights={tmp_path} lacks sub/weights.bin: put the files of"
        " https://huggingface.co/owner/model there (file list: docs/x.md)"
    )
    with pytest.raises(CheckpointError, match=r"^model=m: model\.weights=.*/nowhere not found"):
        resolve_weights(SPEC, tmp_path / "nowhere", tmp_path, download=_no_download, **WHO)


def test_checkpoints_folder_then_download(tmp_path):
    ckpt = tmp_path / "checkpoints"
    calls = []

    def download(**kwargs):
        calls.append(kwargs)
        from pathlib import Path

        _fill(Path(kwargs["local_dir"]))
        return kwargs["local_dir"]

    got = resolve_weights(SPEC, None, ckpt, download=download, **WHO)
    assert got.source == "hub" and got.root == ckpt / "model"
    assert calls == [
        {
            "repo_id": "owner/model",
            "repo_type": "model",
            "revision": None,
            "allow_patterns": ["config.json", "sub/weights.bin"],
            "local_dir": str(ckpt / "model"),
        }
    ]
    again = resolve_weights(SPEC, None, ckpt, download=_no_download, **WHO)
    assert again.source == "checkpoints" and again.sha256 == got.sha256


def test_failed_or_incomplete_download_names_files_and_folder(tmp_path):
    def offline(**kwargs):
        raise OSError("no network")

    with pytest.raises(CheckpointError) as err:
        resolve_weights(SPEC, None, tmp_path, download=offline, **WHO)
    message = str(err.value)
    assert message == (
        f"model=m: weights missing: {tmp_path / 'model' / 'config.json'} and 1 more of its 2 files"
        f" (the download failed (OSError)); put the files of https://huggingface.co/owner/model"
        f" into {tmp_path / 'model'}/ or set model.weights=/path/to/them (file list: docs/x.md;"
        " all at once: python launch.py task=fetch)"
    )

    def partial_download(**kwargs):
        _fill(tmp_path / "model", ("config.json",))

    with pytest.raises(CheckpointError, match=r"sub/weights\.bin \(not in the download\)"):
        resolve_weights(
            SPEC,
            None,
            tmp_path,
            download=partial_download,
            **WHO,
        )


def test_a_download_whose_pinned_hash_differs_is_refused_and_removed(tmp_path):
    """The released SHA-256 of a pinned file (`HubFiles.sha256`, from the assets table) against
    the downloaded bytes, computed here with hashlib: equal passes, different is one line and
    the file is gone (the unpinned one stays)."""
    good = hashlib.sha256(b"wsub/weights.bin").hexdigest()
    pinned = HubFiles("owner/model", SPEC.files, "model", sha256={"sub/weights.bin": good})

    def download(**kwargs):
        from pathlib import Path

        _fill(Path(kwargs["local_dir"]))

    got = resolve_weights(pinned, None, tmp_path / "a", download=download, **WHO)
    assert got.source == "hub" and got.sha256["sub/weights.bin"] == good
    wrong = HubFiles("owner/model", SPEC.files, "model", sha256={"sub/weights.bin": "0" * 64})
    with pytest.raises(CheckpointError) as err:
        resolve_weights(wrong, None, tmp_path / "b", download=download, **WHO)
    assert str(err.value) == (
        f"model=m: {tmp_path / 'b' / 'model' / 'sub/weights.bin'} from"
        f" https://huggingface.co/owner/model: SHA-256 {good[:16]}… differs from the released"
        f" {'0' * 16}…; refused and removed"
    )
    assert not (tmp_path / "b" / "model" / "sub/weights.bin").exists()
    assert (tmp_path / "b" / "model" / "config.json").is_file()


def test_the_releases_carry_the_tables_pins():
    from gesturebench.assets.table import TABLE

    pins = {(a.repo, a.dest): a.sha256 for a in TABLE if a.host == "hub" and a.sha256 is not None}
    for spec in [RELEASE, *(release_files(v) for v in Variant if v not in UNRELEASED)]:
        expected = {
            name: pins[(spec.repo_id, f"{spec.folder}/{name}")]
            for name in spec.files
            if (spec.repo_id, f"{spec.folder}/{name}") in pins
        }
        assert dict(spec.sha256) == expected, spec
    assert RELEASE.sha256  # at least one file of EMAGE's release is pinned


def test_hf_hub_offline_does_not_try_the_network(tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(
        CheckpointError, match=r"config\.json and 1 more of its 2 files \(HF_HUB_OFFLINE is set\)"
    ):
        resolve_weights(SPEC, None, tmp_path, **WHO)


def test_space_urls():
    assert (
        HubFiles("a/b", ("x",), "f", repo_type="space").url == "https://huggingface.co/spaces/a/b"
    )


ONE = HubFiles("owner/space", ("deep/w.bin",), "one", repo_type="space")


def test_configured_file_for_a_one_file_model(tmp_path):
    file = tmp_path / "anywhere.bin"
    file.write_bytes(b"abc")
    got = resolve_weights(ONE, file, tmp_path / "checkpoints", download=_no_download, **WHO)
    assert got.source == "configured" and got.path("deep/w.bin") == file
    assert got.sha256 == {"deep/w.bin": hashlib.sha256(b"abc").hexdigest()}


def test_offline_order_configured_checkpoints_then_hf_cache(tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    snapshot = fake_hf_cache(tmp_path / "hf", ONE)
    ckpt = tmp_path / "checkpoints"
    got = resolve_weights(ONE, None, ckpt, **WHO)
    assert got.source == "hf_cache" and got.path("deep/w.bin") == snapshot / "deep/w.bin"
    assert got.sha256["deep/w.bin"] == hashlib.sha256(b"cached").hexdigest()
    _fill(ckpt / "one", ONE.files, payload=b"local")
    assert resolve_weights(ONE, None, ckpt, **WHO).source == "checkpoints"
    configured = tmp_path / "mine"
    _fill(configured, ONE.files)
    assert resolve_weights(ONE, configured, ckpt, **WHO).source == "configured"


def test_offline_without_the_file_anywhere_is_one_line(tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    with pytest.raises(CheckpointError) as err:
        resolve_weights(ONE, None, tmp_path / "checkpoints", **WHO)
    message = str(err.value)
    assert "\n" not in message and "(HF_HUB_OFFLINE is set)" in message
    assert f"missing: {tmp_path / 'checkpoints' / 'one' / 'deep' / 'w.bin'} (" in message
    assert "files of https://huggingface.co/spaces/owner/space into" in message


#: what each model of conf/model/ lacks in an empty checkpoints folder, offline: the key its
#: message names; every other model builds without files
NEEDS = {
    "emage": "model.weights",
    "gesturelsm": "model.weights",
    "semtalk": "model.dir",
    "semconflow": "model.dir",
    "precomputed": "model.dir",
}
MODELS = sorted(p.stem for p in (CONF / "model").glob("*.yaml"))


@pytest.mark.parametrize("name", MODELS)
def test_each_models_missing_files_are_one_short_line_naming_the_key(name, tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    checkpoints = tmp_path / "checkpoints"
    for name_ in MEAN_STD_FILES.values():  # GestureLSM's repository files, not released weights
        (checkpoints / "gesturelsm" / "mean_std").mkdir(parents=True, exist_ok=True)
        np.save(checkpoints / "gesturelsm" / "mean_std" / name_, np.zeros(3))
    cfg = composed(f"model={name}", f"paths.checkpoints={checkpoints}")
    if name not in NEEDS:
        build_model(cfg.model)
        return
    with pytest.raises(CheckpointError) as err:
        build_model(cfg.model)
    text = str(err.value).replace(str(checkpoints), "checkpoints")
    assert text.startswith(f"model={name}: ") and "\n" not in text and len(text) <= 400, text
    assert f" {NEEDS[name]}=/" in text
    assert not [m for m in MODELS if m != name and f"conf/model/{m}.yaml" in text], text


def test_each_release_lists_all_its_files_in_the_docs_its_message_names():
    releases = [RELEASE, FGD_ENCODER, MEAN_SPEED, MINILM]
    releases += [release_files(v) for v in Variant if v not in UNRELEASED]
    for spec in releases:
        text = (REPO / spec.docs).read_text()
        assert [name for name in spec.files if f"{name}`" not in text] == [], spec
