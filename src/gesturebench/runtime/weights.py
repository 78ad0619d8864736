"""Where public model weights come from: a configured folder (or file, for a one-file model), else
`checkpoints/<folder>/`, else the Hugging Face cache, else the Hugging Face Hub (downloaded into
`checkpoints/<folder>/`) — the same order for every released model (EMAGE, its FGD encoder and BC
speed normaliser, GestureLSM). Offline and missing, one line says which files go where (and that
`task=fetch` gets them all, verified); a download whose pinned SHA-256 differs is refused."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from gesturebench.runtime.errors import CheckpointError

Downloader = Callable[..., str]


@dataclass(frozen=True)
class HubFiles:
    """The files one released model needs, as they lie in its Hugging Face repository.

    `folder` is the sub-folder of `paths.checkpoints` they are looked for in (and downloaded to);
    `repo_type` is "model", "space" or "dataset"; `sha256`: the released SHA-256 of the files
    whose hash is pinned (`gesturebench.assets.table`), which a download must match."""

    repo_id: str
    files: tuple[str, ...]
    folder: str
    repo_type: str = "model"
    revision: str | None = None
    #: where the documentation lists every file (the one-line messages name only the first missing)
    docs: str = "docs/models.md"
    sha256: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)

    @property
    def url(self) -> str:
        prefix = {"model": "", "space": "spaces/", "dataset": "datasets/"}[self.repo_type]
        return f"https://huggingface.co/{prefix}{self.repo_id}"

    def missing(self, root: Path) -> list[str]:
        return [name for name in self.files if not (root / name).is_file()]


@dataclass(frozen=True)
class ResolvedWeights:
    """A folder holding every file of a `HubFiles`, where it came from ("configured", "checkpoints",
    "hf_cache" or "hub"), and each file's SHA-256 (for `results.json`). `files` names the files
    that do not lie at `root / name` (a configured file, the Hugging Face cache)."""

    root: Path
    source: str
    sha256: dict[str, str]
    files: dict[str, Path] = field(default_factory=dict)

    def path(self, name: str) -> Path:
        return self.files.get(name, self.root / name)

    def info(self) -> dict:
        return {"weights": str(self.root), "weights_source": self.source, "sha256": self.sha256}


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _resolved(spec: HubFiles, root: Path, source: str) -> ResolvedWeights:
    return ResolvedWeights(root, source, {name: sha256_file(root / name) for name in spec.files})


def _from_files(root: Path, source: str, files: dict[str, Path]) -> ResolvedWeights:
    return ResolvedWeights(root, source, {n: sha256_file(p) for n, p in files.items()}, files)


def _hf_cached(spec: HubFiles) -> dict[str, Path] | None:
    """Every file of `spec` in the Hugging Face cache (`HF_HUB_CACHE`), or None."""
    from huggingface_hub import try_to_load_from_cache

    found = {}
    for name in spec.files:
        hit = try_to_load_from_cache(
            spec.repo_id, name, revision=spec.revision, repo_type=spec.repo_type
        )
        if not isinstance(hit, str):
            return None
        found[name] = Path(hit)
    return found


def hub_downloader() -> Downloader | None:
    """huggingface_hub's `snapshot_download`, or None when `HF_HUB_OFFLINE` is set."""
    from huggingface_hub import constants, snapshot_download

    return None if constants.HF_HUB_OFFLINE else snapshot_download


def resolve_weights(
    spec: HubFiles,
    configured: str | Path | None,
    checkpoints_dir: str | Path,
    download: Downloader | None = None,
    *,
    owner: str,
    key: str,
) -> ResolvedWeights:
    """The folder that holds `spec.files`: `configured` when set (a folder that must hold them all,
    or the file itself when `spec` has one), else `<checkpoints_dir>/<spec.folder>` when complete,
    else the Hugging Face cache when it holds them all, else a Hub download into that folder.

    `download` is `huggingface_hub.snapshot_download`'s signature (injected by tests); it is not
    tried when `HF_HUB_OFFLINE` is set. Any failure is one `CheckpointError` line (`missing_line`)
    starting with `owner` (``model=emage``) and naming the config `key` that sets the path."""
    if configured:
        root = Path(configured).expanduser()
        if root.is_file() and len(spec.files) == 1:
            return _from_files(root.parent, "configured", {spec.files[0]: root})
        if not root.is_dir():
            raise CheckpointError(
                f"{owner}: {key}={root} not found (the files of {spec.url}: {spec.docs})"
            )
        if missing := spec.missing(root):
            raise CheckpointError(
                f"{owner}: {key}={root} lacks {missing[0]}{_more(spec, missing)}: put the files of"
                f" {spec.url} there (file list: {spec.docs})"
            )
        return _resolved(spec, root, "configured")
    root = Path(checkpoints_dir) / spec.folder
    missing = spec.missing(root)
    if not missing:
        return _resolved(spec, root, "checkpoints")
    if download is None and (cached := _hf_cached(spec)):
        return _from_files(root, "hf_cache", cached)
    try:
        download = download or hub_downloader()
        if download is None:
            raise CheckpointError(
                missing_line(spec, root, missing, owner, key, "HF_HUB_OFFLINE is set")
            )
        download(
            repo_id=spec.repo_id,
            repo_type=spec.repo_type,
            revision=spec.revision,
            allow_patterns=list(spec.files),
            local_dir=str(root),
        )
    except CheckpointError:
        raise
    except Exception as exc:  # no network, unknown repository, interrupted transfer: all one line
        why = f"the download failed ({type(exc).__name__})"
        raise CheckpointError(missing_line(spec, root, missing, owner, key, why)) from None
    if missing := spec.missing(root):
        why = "not in the download"
        raise CheckpointError(missing_line(spec, root, missing, owner, key, why))
    resolved = _resolved(spec, root, "hub")
    differ = [
        n for n, sha in spec.sha256.items() if n in resolved.sha256 and resolved.sha256[n] != sha
    ]
    if differ:
        for name in differ:  # nothing that fails its check stays where it passes for complete
            (root / name).unlink(missing_ok=True)
        first = differ[0]
        raise CheckpointError(
            f"{owner}: {root / first} from {spec.url}: SHA-256 {resolved.sha256[first][:16]}…"
            f" differs from the released {spec.sha256[first][:16]}…; refused and removed"
        )
    return resolved


def missing_line(
    spec: HubFiles, root: Path, missing: list[str], owner: str, key: str, why: str
) -> str:
    """One line: who needs the weights, the first missing file (and how many more), why they are
    not there, where they come from and the config key to point elsewhere; the full list of files
    is in `spec.docs`."""
    return (
        f"{owner}: weights missing: {root / missing[0]}{_more(spec, missing)} ({why}); put the"
        f" files of "
        f"{spec.url} into {root}/ or set {key}=/path/to/them (file list: {spec.docs};"
        " all at once: python launch.py task=fetch)"
    )


def _more(spec: HubFiles, missing: list[str]) -> str:
    """ " and N more of its M files" after the first missing file, or nothing."""
    return (
        f" and {len(missing) - 1} more of its {len(spec.files)} files" if len(missing) > 1 else ""
    )
