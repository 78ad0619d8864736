"""A Hugging Face cache laid out as `huggingface_hub` writes it, for the offline weight lookups."""

from __future__ import annotations

from pathlib import Path


def fake_hf_cache(cache: Path, spec, payload: bytes = b"cached") -> Path:
    """The Hugging Face cache layout of `spec` at revision main: refs/main → snapshots/<commit>/."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = cache / f"{spec.repo_type}s--{spec.repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    for name in spec.files:
        (repo / "snapshots" / commit / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / "snapshots" / commit / name).write_bytes(payload)
    return repo / "snapshots" / commit
