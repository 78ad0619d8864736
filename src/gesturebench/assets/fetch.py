"""Fetching, verifying, bundling and installing the assets of `gesturebench.assets.table`.

Nothing reaches an asset's final path unverified: a Hub file is resolved by `huggingface_hub` (its
revision, size and location), a GitHub file by its raw URL; either streams through `requests` into
``<name>.part`` in a staging folder (resumed with a Range request); it is hashed and only a
file whose SHA-256 matches (the table's, else the one recorded on first fetch in
``<paths.checkpoints>/assets.lock.json``) is renamed onto its path. A mismatch is one
`CheckpointError` line and the bad bytes are deleted.

`fetch_assets` carries out one `task=fetch` as its task decided it (a `Request`): the files fetched
(or a bundle installed), the bundle and the run's record written, the SMPL-X file checked."""

from __future__ import annotations

import io
import json
import logging
import os
import shutil
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gesturebench.assets.table import GITHUB, HUB, Asset, Need, Table
from gesturebench.runtime.atomic import atomic_path, write_atomic
from gesturebench.runtime.errors import CheckpointError, ConfigError
from gesturebench.runtime.weights import sha256_file

log = logging.getLogger(__name__)

LOCK = "assets.lock.json"
STAGING = ".gesturebench-fetch"
MANIFEST = "manifest.json"
UNPINNED = "unpinned: hash recorded on first fetch"
#: bytes per read: a transfer cut off loses at most this much of what arrived
CHUNK = 1 << 13
SMPLX_SITE = "https://smpl-x.is.tue.mpg.de"
#: SHA-256 of the official SMPL-X model files. None are published where this could read them
#: (the files are licence-gated downloads); a supplied file's hash is recorded, not verified.
SMPLX_SHA256: dict[str, str] = {}


@dataclass(frozen=True)
class Placed:
    """An asset and the file it is installed as."""

    asset: Asset
    path: Path

    @property
    def member(self) -> str:
        """Its name inside a bundle: ``checkpoints/<dest>`` or ``dataset/<dest>``."""
        return f"{self.asset.root}/{self.asset.dest}"


def place(asset: Asset, checkpoints: Path, dataset_root: Path | None) -> Placed | None:
    """Where `asset` goes (None for a dataset file when no dataset root is given)."""
    if asset.root == "dataset":
        return None if dataset_root is None else Placed(asset, dataset_root / asset.dest)
    return Placed(asset, checkpoints / asset.dest)


def place_all(needs: Sequence[Need], checkpoints: Path, dataset_root: Path | None) -> list[Placed]:
    """Where each of `needs` goes (its own path, else `place`'s), one per path; a dataset file is
    left out without a dataset root."""
    placed: dict[Path, Placed] = {}
    for asset, path in needs:
        where = Placed(asset, path) if path is not None else place(asset, checkpoints, dataset_root)
        if where is not None:
            placed.setdefault(where.path, where)
    return list(placed.values())


class Lock:
    """``<checkpoints>/assets.lock.json``: per asset key, the SHA-256, size, revision and source of
    the file installed (what an unpinned asset is held to after its first fetch)."""

    def __init__(self, checkpoints: Path):
        self.path = checkpoints / LOCK
        try:
            self.entries: dict[str, dict] = json.loads(self.path.read_text())
        except FileNotFoundError:
            self.entries = {}
        except (OSError, ValueError) as exc:
            raise CheckpointError(
                f"{self.path}: unreadable ({exc}); remove it to start over"
            ) from None

    def expected(self, asset: Asset) -> str | None:
        """The SHA-256 the file must have: the table's, else the one recorded on first fetch."""
        return asset.sha256 or self.entries.get(asset.key, {}).get("sha256")

    def record(self, placed: Placed, sha256: str, revision: str | None, source: str) -> None:
        self.entries[placed.asset.key] = {
            "sha256": sha256,
            "size": placed.path.stat().st_size,
            "revision": revision,
            "source": source,
            "path": str(placed.path),
            "pinned": placed.asset.pinned,
        }
        _write_json(self.path, self.entries, sort_keys=True)


def _write_json(path: Path, document: Any, sort_keys: bool = False) -> None:
    write_atomic(path, json.dumps(document, indent=2, sort_keys=sort_keys) + "\n")


def refuse(asset: Asset, what: str, got: str, expected: str, source: str) -> CheckpointError:
    return CheckpointError(
        f"{asset.key}: SHA-256 {got[:16]}… of {what} differs from the expected {expected[:16]}… "
        f"({source}); refused, nothing installed"
    )


def install(staged: Path, placed: Placed, expected: str | None, source: str) -> str:
    """Hash `staged`; when it matches `expected` (or nothing is expected yet), rename it onto the
    asset's path; else delete it and raise one line. Returns the SHA-256."""
    got = sha256_file(staged)
    if expected is not None and got != expected:
        staged.unlink(missing_ok=True)
        raise refuse(placed.asset, "the download", got, expected, source)
    placed.path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.replace(staged, placed.path)
    except OSError:  # another file system (a dataset root elsewhere): copy atomically
        with atomic_path(placed.path) as tmp:
            shutil.copyfile(staged, tmp)
        staged.unlink(missing_ok=True)
    return got


def writable(folder: Path, key: str) -> None:
    """`folder` exists or can be made, and files can be written in it; else one line naming the
    config `key`."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".{STAGING}-probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise CheckpointError(f"{key}={folder}: not writable ({reason})") from None


@dataclass
class Fetcher:
    """Downloads assets from `hub` (a Hugging Face endpoint) and `github` (a raw-files endpoint)."""

    hub: str = HUB
    github: str = GITHUB
    progress: bool = True

    def size(self, asset: Asset) -> int | None:
        """The table's size, else the server's (None when it cannot be asked)."""
        if asset.size is not None:
            return asset.size
        try:
            if asset.host == "hub":
                return self._hub_metadata(asset).size
            import requests

            head = requests.head(self.source(asset), allow_redirects=True, timeout=30)
            return int(head.headers["Content-Length"]) if head.ok else None
        except Exception:  # a size is only for the plan's total
            return None

    def source(self, asset: Asset) -> str:
        """Where `asset` is fetched from (`Asset.source` at these endpoints)."""
        return asset.source(self.hub, self.github)

    def _hub_metadata(self, asset: Asset):
        from huggingface_hub import get_hf_file_metadata, hf_hub_url

        url = hf_hub_url(
            asset.repo,
            asset.path,
            repo_type=asset.repo_type,
            revision=asset.revision or "main",
            endpoint=self.hub,
        )
        return get_hf_file_metadata(url, endpoint=self.hub)

    def fetch(self, placed: Placed, expected: str | None) -> tuple[str, str | None]:
        """Download `placed` into ``<its root>/.gesturebench-fetch/`` and install it (`install`);
        returns its SHA-256 and the commit it was fetched at (None for a GitHub file at `main`).

        A Hub file's revision, size and download location come from huggingface_hub
        (`get_hf_file_metadata`: its errors say a revision, file or repository is unknown); its
        bytes, like a GitHub file's, stream into ``<revision>/<path>.part``, resumed by a later
        fetch with a Range request (huggingface_hub 2.4's `hf_hub_download` deletes its partial
        file when a transfer fails, so it could not resume across runs)."""
        asset = placed.asset
        staging = placed.path.parents[len(Path(asset.dest).parts) - 1] / STAGING
        source = self.source(asset)
        try:
            if asset.host == "hub":
                meta = self._hub_metadata(asset)
                url, revision = str(meta.location), meta.commit_hash or asset.revision
            else:
                url, revision = source, asset.revision
            folder = f"{asset.host}/{asset.repo_type}/{asset.repo}/{revision or 'main'}"
            part = staging / folder / f"{asset.path}.part"
            self._download(url, part, Path(asset.path).name)
        except CheckpointError:
            raise
        except OSError as exc:
            if exc.errno is not None:  # the disk, not the network
                raise CheckpointError(
                    f"{asset.key}: cannot write under {staging} ({exc.strerror})"
                ) from None
            raise self._failed(asset, source, exc) from None
        except Exception as exc:  # network, unknown repository, refused transfer: one line
            raise self._failed(asset, source, exc) from None
        return install(part, placed, expected, source), revision

    def _failed(self, asset: Asset, source: str, exc: Exception) -> CheckpointError:
        from huggingface_hub.errors import (
            EntryNotFoundError,
            RepositoryNotFoundError,
            RevisionNotFoundError,
        )

        if isinstance(exc, RevisionNotFoundError):
            why = f"revision {asset.revision or 'main'} not found in {asset.repo}"
        elif isinstance(exc, EntryNotFoundError) or _status(exc) == 404:
            why = f"{asset.path} not found in {asset.repo} at {asset.revision or 'main'}"
        elif isinstance(exc, RepositoryNotFoundError):
            why = f"repository {asset.repo} not found"
        else:
            why = f"download failed ({type(exc).__name__}); rerun to resume"
        return CheckpointError(f"{asset.key}: {why} ({source})")

    def _download(self, url: str, part: Path, name: str) -> None:
        """Stream `url` into `part`, resuming a partial one with a Range request."""
        import requests
        from tqdm.auto import tqdm

        part.parent.mkdir(parents=True, exist_ok=True)
        have = part.stat().st_size if part.exists() else 0
        headers = {"Range": f"bytes={have}-"} if have else {}
        with requests.get(url, headers=headers, stream=True, timeout=60) as response:
            if response.status_code == 416:  # the part is already whole
                return
            response.raise_for_status()
            resumed = response.status_code == 206
            total = int(response.headers.get("Content-Length", 0)) + (have if resumed else 0)
            with (
                open(part, "ab" if resumed else "wb") as out,
                tqdm(
                    total=total or None,
                    initial=have if resumed else 0,
                    unit="B",
                    unit_scale=True,
                    desc=name,
                    disable=not self.progress,
                ) as bar,
            ):
                for chunk in response.iter_content(CHUNK):
                    out.write(chunk)
                    bar.update(len(chunk))


def _status(exc: Exception) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None)


# --- offline bundles ------------------------------------------------------------------------


def write_bundle(bundle: Path, placed: list[Placed], lock: Lock, sources: dict[str, str]) -> dict:
    """One tar archive: ``manifest.json`` (per file: key, path inside the archive, sha256, size,
    source, revision) and every file under ``checkpoints/`` or ``dataset/``. Each file is hashed
    again and must match what it was installed as; written atomically."""
    entries = []
    for p in placed:
        got = sha256_file(p.path)
        expected = lock.expected(p.asset)
        if expected is not None and got != expected:
            raise refuse(p.asset, str(p.path), got, expected, "installed file")
        entries.append(
            {
                "key": p.asset.key,
                "path": p.member,
                "sha256": got,
                "size": p.path.stat().st_size,
                "source": sources.get(p.asset.key, ""),
                "revision": lock.entries.get(p.asset.key, {}).get("revision", p.asset.revision),
                "pinned": p.asset.pinned,
            }
        )
    manifest = {"format": 1, "files": entries}
    data = json.dumps(manifest, indent=2).encode()
    try:
        with atomic_path(bundle) as tmp, tarfile.open(tmp, "w") as tar:
            info = tarfile.TarInfo(MANIFEST)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
            for p in placed:
                tar.add(p.path, arcname=p.member, recursive=False)
    except OSError as exc:
        raise CheckpointError(
            f"task.bundle={bundle}: cannot write ({exc.strerror or type(exc).__name__})"
        ) from None
    return manifest


def read_manifest(tar: tarfile.TarFile, bundle: Path) -> list[dict]:
    try:
        member = tar.extractfile(MANIFEST)
        if member is None:
            raise KeyError(MANIFEST)
        files = json.loads(member.read())["files"]
        for entry in files:
            for name in ("key", "path", "sha256", "size"):
                entry[name]  # presence check
    except (KeyError, ValueError, TypeError) as exc:
        raise ConfigError(f"task.from_bundle={bundle}: no valid {MANIFEST} ({exc})") from None
    return files


def install_bundle(
    bundle: Path, table: Table, checkpoints: Path, dataset_root: Path | None
) -> list[tuple[Placed, str]]:
    """Install every file of `bundle` (written by `write_bundle`) where the table puts it, each
    extracted with tarfile's ``data`` filter (no absolute paths, no ``..``, no links out) into a
    staging folder, hashed, compared with the manifest, the table's pin and the lock's record,
    then renamed into place; returns the installed files and their SHA-256. Dataset files are
    skipped (said so) without a dataset root."""
    lock = Lock(checkpoints)
    installed = []
    try:
        tar = tarfile.open(bundle)  # noqa: SIM115 - closed by the with below
    except (OSError, tarfile.TarError) as exc:
        raise ConfigError(
            f"task.from_bundle={bundle}: not a readable tar archive ({exc})"
        ) from None
    with tar:
        files = read_manifest(tar, bundle)
        for entry in files:
            asset = table.by_key.get(entry["key"])
            if asset is None:
                raise ConfigError(
                    f"task.from_bundle={bundle}: {entry['key']} is not in the asset table "
                    f"({table.origin}); refused"
                )
            placed = place(asset, checkpoints, dataset_root)
            if placed is None:
                log.info("skipped %s: set dataset=beat2 dataset.root=... to install it", asset.key)
                continue
            if entry["path"] != placed.member:
                raise ConfigError(
                    f"task.from_bundle={bundle}: {asset.key} is stored as {entry['path']}, "
                    f"not {placed.member}; refused"
                )
            for expected, what in ((asset.sha256, "the table"), (lock.expected(asset), "lock")):
                if expected is not None and entry["sha256"] != expected:
                    raise refuse(asset, f"{bundle}'s manifest", entry["sha256"], expected, what)
            staging = placed.path.parents[len(Path(asset.dest).parts) - 1] / STAGING / "bundle"
            try:
                tar.extract(placed.member, staging, filter="data")
            except KeyError:
                raise ConfigError(
                    f"task.from_bundle={bundle}: {placed.member} is in its manifest, not in it"
                ) from None
            except (tarfile.TarError, OSError) as exc:
                raise CheckpointError(
                    f"task.from_bundle={bundle}: {placed.member} refused ({exc})"
                ) from None
            sha = install(staging / placed.member, placed, entry["sha256"], str(bundle))
            lock.record(placed, sha, entry.get("revision"), entry.get("source") or str(bundle))
            installed.append((placed, sha))
    return installed


# --- one task=fetch -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """One `task=fetch` as its task decided it: the files `needs` (placed under `checkpoints`, or
    `dataset_root`), or the archive `from_bundle` to install instead (its files checked against
    `table`); `bundle`: also write the files into that archive; `dry_run`: print the plan only;
    `body_model`: the SMPL-X file supplied (checked, never fetched)."""

    table: Table
    checkpoints: Path
    dataset_root: Path | None = None
    needs: Sequence[Need] = ()
    body_model: Path | None = None
    bundle: Path | None = None
    from_bundle: Path | None = None
    dry_run: bool = False


def fetch_assets(request: Request, fetcher: Fetcher, record: Path) -> dict:
    """Carry out `request` with `fetcher`: install its bundle, or fetch its files then check the
    SMPL-X file. Returns what was done, also written into `record` (the run's fetch.json) once
    files were installed or verified."""
    if request.from_bundle is not None:
        return _install(request.from_bundle, request, record)
    document = _fetch(request, fetcher, record)
    check_body_model(request.body_model)
    return document


def _fetch(request: Request, fetcher: Fetcher, record: Path) -> dict:
    """Print the plan and its total size, fetch what is missing, verify all, print where each
    file is (and write the bundle and `record`)."""
    checkpoints = request.checkpoints
    needed = place_all(request.needs, checkpoints, request.dataset_root)
    if not needed:
        log.info("nothing to fetch: this configuration needs no public files")
        return {"files": []}
    writable(checkpoints, "paths.checkpoints")
    for root in {p.path.parents[len(Path(p.asset.dest).parts) - 1] for p in needed}:
        writable(root, "paths.checkpoints" if root == checkpoints else "dataset.root")
    lock = Lock(checkpoints)
    todo = [p for p in needed if not p.path.is_file()]
    if todo and not request.dry_run and _offline():
        raise ConfigError(
            f"HF_HUB_OFFLINE is set but {len(todo)} files are to be fetched (the first "
            f"{todo[0].asset.key}): unset it on a connected machine, or install a bundle "
            "with task.from_bundle=assets.tar (docs/cluster.md)"
        )
    sizes = {
        p.asset.key: fetcher.size(p.asset) if not request.dry_run else p.asset.size for p in todo
    }
    known = [s for s in sizes.values() if s is not None]
    rows = [("file", "from", "size", "SHA-256")]
    for p in todo:
        sha = p.asset.sha256[:12] + "…" if p.asset.sha256 else UNPINNED
        rows.append((p.asset.key, fetcher.source(p.asset), _size(sizes[p.asset.key]), sha))
    total = _size(sum(known)) + ("" if len(known) == len(todo) else " + files of unknown size")
    log.info(
        "%d of %d files to fetch (%s), %d already there:\n%s",
        len(todo),
        len(needed),
        total,
        len(needed) - len(todo),
        _table(rows) if todo else "",
    )
    if request.dry_run:
        return {"files": [], "to_fetch": [p.asset.key for p in todo]}
    result: list[dict[str, Any]] = []
    for p in needed:
        source = fetcher.source(p.asset)
        expected = lock.expected(p.asset)
        if p.path.is_file():
            sha = sha256_file(p.path)
            if expected is not None and sha != expected:
                raise refuse(p.asset, str(p.path), sha, expected, "already installed")
            status, revision = "present", lock.entries.get(p.asset.key, {}).get("revision")
        else:
            if expected is None:
                log.info("%s: %s", p.asset.key, UNPINNED)
            sha, revision = fetcher.fetch(p, expected)
            status = "fetched" if p.asset.pinned else "fetched, hash recorded"
        if p.asset.key not in lock.entries or lock.entries[p.asset.key]["sha256"] != sha:
            lock.record(p, sha, revision, source)
        result.append(
            {
                "key": p.asset.key,
                "path": str(p.path),
                "sha256": sha,
                "status": status,
                "revision": revision,
                "source": source,
                "pinned": p.asset.pinned,
            }
        )
    done = [("file", "where", "SHA-256", "status")]
    done += [(r["key"], r["path"], r["sha256"][:12] + "…", r["status"]) for r in result]
    log.info("where each file is:\n%s", _table(done))
    document = {"files": result, "lock": str(lock.path)}
    if request.bundle is not None:
        sources = {r["key"]: r["source"] for r in result}
        manifest = write_bundle(request.bundle, needed, lock, sources)
        log.info("bundle: %s (%d files with manifest.json)", request.bundle, len(manifest["files"]))
        document["bundle"] = str(request.bundle)
    _write_json(record, document)
    return document


def _install(bundle: Path, request: Request, record: Path) -> dict:
    """Install `bundle` (`install_bundle`), print where each file went and write `record`."""
    if not bundle.is_file():
        raise ConfigError(f"task.from_bundle={bundle}: not found")
    writable(request.checkpoints, "paths.checkpoints")
    installed = install_bundle(bundle, request.table, request.checkpoints, request.dataset_root)
    rows = [("file", "where", "SHA-256")]
    rows += [(p.asset.key, str(p.path), sha[:12] + "…") for p, sha in installed]
    log.info(
        "installed %d files from %s, every hash verified:\n%s",
        len(installed),
        bundle,
        _table(rows),
    )
    document = {
        "bundle": str(bundle),
        "files": [{"key": p.asset.key, "path": str(p.path), "sha256": sha} for p, sha in installed],
    }
    _write_json(record, document)
    return document


def check_body_model(file: Path | None) -> None:
    """SMPL-X is licence-gated: say where to get it, and check a supplied `file`."""
    if file is None:
        log.info(
            "SMPL-X is not fetched (its licence needs a registration): register at %s, "
            "download SMPL-X (SMPLX_NEUTRAL_2020.npz) and set body_model.model_path=/path/to/"
            "SMPLX_NEUTRAL_2020.npz (docs/cluster.md)",
            SMPLX_SITE,
        )
        return
    if not file.is_file():
        raise ConfigError(f"body_model.model_path={file}: not found (from {SMPLX_SITE})")
    sha = sha256_file(file)
    if sha in SMPLX_SHA256.values():
        log.info(
            "SMPL-X: %s is the official %s",
            file,
            next(k for k, v in SMPLX_SHA256.items() if v == sha),
        )
    else:
        log.info(
            "SMPL-X: %s SHA-256 %s; no official SHA-256 of the SMPL-X releases is published "
            "where this could read it: recorded, not verified",
            file,
            sha,
        )


def _offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def _size(n: int | None) -> str:
    if n is None:
        return "?"
    value = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{n} B"


def _table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows)
