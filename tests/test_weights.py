"""Weight resolution: configured folder, then checkpoints/, then the Hub; one line when missing."""

import hashlib

import pytest

from gesturebench.errors import CheckpointError
from gesturebench.weights import HubFiles, resolve_weights

SPEC = HubFiles("owner/model", ("config.json", "sub/weights.bin"), "model")


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
    got = resolve_weights(SPEC, configured, ckpt, download=_no_download)
    assert (got.root, got.source) == (configured, "configured")
    expected = hashlib.sha256(b"wsub/weights.bin").hexdigest()
    assert got.sha256["sub/weights.bin"] == expected
    assert got.info()["weights_source"] == "configured"


def test_configured_folder_missing_a_file_is_one_line(tmp_path):
    _fill(tmp_path, names=("config.json",))
    with pytest.raises(
        CheckpointError,
        match=r"missing sub/weights.bin \(files of https://huggingface.co/owner/model\)",
    ):
        resolve_weights(SPEC, tmp_path, tmp_path / "checkpoints", download=_no_download)
    with pytest.raises(CheckpointError, match="weights folder not found"):
        resolve_weights(SPEC, tmp_path / "nowhere", tmp_path, download=_no_download)


def test_checkpoints_folder_then_download(tmp_path):
    ckpt = tmp_path / "checkpoints"
    calls = []

    def download(**kwargs):
        calls.append(kwargs)
        from pathlib import Path

        _fill(Path(kwargs["local_dir"]))
        return kwargs["local_dir"]

    got = resolve_weights(SPEC, None, ckpt, download=download)
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
    again = resolve_weights(SPEC, None, ckpt, download=_no_download)
    assert again.source == "checkpoints" and again.sha256 == got.sha256


def test_failed_or_incomplete_download_names_files_and_folder(tmp_path):
    def offline(**kwargs):
        raise OSError("no network")

    with pytest.raises(CheckpointError) as err:
        resolve_weights(SPEC, None, tmp_path, download=offline)
    message = str(err.value)
    assert "\n" not in message and "OSError" in message
    assert "config.json, sub/weights.bin from https://huggingface.co/owner/model" in message
    assert str(tmp_path / "model") in message

    def partial_download(**kwargs):
        _fill(tmp_path / "model", ("config.json",))

    with pytest.raises(CheckpointError, match=r"did not bring sub/weights\.bin"):
        resolve_weights(
            SPEC, None, tmp_path, download=lambda **kw: _fill(tmp_path / "model", ("config.json",))
        )


def test_hf_hub_offline_does_not_try_the_network(tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(CheckpointError, match=r"HF_HUB_OFFLINE is set: put config\.json"):
        resolve_weights(SPEC, None, tmp_path)


def test_space_urls():
    assert (
        HubFiles("a/b", ("x",), "f", repo_type="space").url == "https://huggingface.co/spaces/a/b"
    )


ONE = HubFiles("owner/space", ("deep/w.bin",), "one", repo_type="space")


def test_configured_file_for_a_one_file_model(tmp_path):
    file = tmp_path / "anywhere.bin"
    file.write_bytes(b"abc")
    got = resolve_weights(ONE, file, tmp_path / "checkpoints", download=_no_download)
    assert got.source == "configured" and got.path("deep/w.bin") == file
    assert got.sha256 == {"deep/w.bin": hashlib.sha256(b"abc").hexdigest()}


def fake_hf_cache(cache, spec, payload=b"cached"):
    """The Hugging Face cache layout of `spec` at revision main: refs/main → snapshots/<commit>/."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = cache / f"{spec.repo_type}s--{spec.repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    for name in spec.files:
        (repo / "snapshots" / commit / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / "snapshots" / commit / name).write_bytes(payload)
    return repo / "snapshots" / commit


def test_offline_order_configured_checkpoints_then_hf_cache(tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    snapshot = fake_hf_cache(tmp_path / "hf", ONE)
    ckpt = tmp_path / "checkpoints"
    got = resolve_weights(ONE, None, ckpt)
    assert got.source == "hf_cache" and got.path("deep/w.bin") == snapshot / "deep/w.bin"
    assert got.sha256["deep/w.bin"] == hashlib.sha256(b"cached").hexdigest()
    _fill(ckpt / "one", ONE.files, payload=b"local")
    assert resolve_weights(ONE, None, ckpt).source == "checkpoints"
    configured = tmp_path / "mine"
    _fill(configured, ONE.files)
    assert resolve_weights(ONE, configured, ckpt).source == "configured"


def test_offline_without_the_file_anywhere_is_one_line(tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    with pytest.raises(CheckpointError) as err:
        resolve_weights(ONE, None, tmp_path / "checkpoints")
    message = str(err.value)
    assert "\n" not in message and "HF_HUB_OFFLINE is set" in message
    assert "deep/w.bin from https://huggingface.co/spaces/owner/space" in message
    assert str(tmp_path / "checkpoints" / "one") in message
