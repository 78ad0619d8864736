"""A folder's files replaced together or not at all, whatever kills the process.

`staged` gives a staging folder `<folder>/.tmp-<id>/` to write the new files into. On success it
writes `manifest.json` there (each file's SHA-256) and renames the staging folder to
`<folder>/.commit/`: that rename is the commit point. The files are then moved into place, the files
of the previous manifest that the new one no longer lists removed, and the manifest moved last.

A kill before the commit point leaves the previous files untouched and a `.tmp-*` folder, which the
next `recover` (every `staged` starts with one) removes; a kill after it leaves `.commit/`, which
`recover` finishes moving. `verified` reads a file only where no commit is pending and the manifest
lists the file with its checksum, so a reader never takes a file of one commit beside another's.
Not power-loss proof beyond what the file system's ordering of renames gives (files are fsynced
before the commit point).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

MANIFEST = "manifest.json"
#: the committed staging folder whose files are being moved into place
PENDING = ".commit"
#: the prefix of staging folders (a left-over one is a write that never reached its commit point)
STAGING = ".tmp-"


@contextmanager
def staged(folder: str | Path, carry: bool = False) -> Iterator[Path]:
    """Yield a new staging folder inside `folder`; commit its files into `folder` when the block
    ends normally, remove it when the block raises. `carry`: the files the current manifest lists
    and the block does not rewrite stay listed (otherwise they are removed)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    recover(folder)
    stage = folder / f"{STAGING}{uuid.uuid4().hex[:12]}"
    stage.mkdir()
    try:
        yield stage
        files = {name: _sha256(stage / name) for name in _files(stage)}
        if carry:
            files = {**(listed(folder) or {}), **files}
        (stage / MANIFEST).write_text(json.dumps({"files": files}, indent=2) + "\n")
        for name in [*_files(stage)]:
            _fsync(stage / name)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    os.replace(stage, folder / PENDING)  # the commit point
    _roll_forward(folder)


def recover(folder: str | Path) -> None:
    """Finish the commit a kill interrupted in `folder` and remove left-over staging folders."""
    folder = Path(folder)
    if (folder / PENDING).is_dir():
        _roll_forward(folder)
    for stage in folder.glob(f"{STAGING}*"):
        if stage.is_dir():
            shutil.rmtree(stage, ignore_errors=True)


def verified(folder: str | Path, name: str) -> bytes | None:
    """The bytes of `folder`/`name` where they can be trusted: no commit pending and the manifest
    lists `name` with their SHA-256, or, in a folder without a manifest (written before manifests
    or by hand), as they are; None otherwise. An unreadable file raises `OSError`."""
    folder = Path(folder)
    data = (folder / name).read_bytes()
    if (folder / PENDING).exists():
        return None
    files = listed(folder)
    if files is None:
        return data
    return data if files.get(name) == hashlib.sha256(data).hexdigest() else None


def listed(folder: str | Path) -> dict[str, str] | None:
    """{file: SHA-256} of `folder`'s manifest; None without one, {} where it is unreadable. Only
    names inside the folder count (a hand-made manifest cannot make a commit remove other files)."""
    try:
        files = json.loads((Path(folder) / MANIFEST).read_text())["files"]
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    if not isinstance(files, dict):
        return {}
    return {
        n: h for n, h in files.items() if not Path(n).is_absolute() and ".." not in Path(n).parts
    }


def _roll_forward(folder: Path) -> None:
    """Move the committed files of `folder`/.commit into place, the manifest last (idempotent: a
    kill part-way leaves what the next call finishes)."""
    pending = folder / PENDING
    manifest = pending / MANIFEST
    if manifest.exists():
        new = json.loads(manifest.read_text())["files"]
        for name in new:
            if (pending / name).exists():
                (folder / name).parent.mkdir(parents=True, exist_ok=True)
                os.replace(pending / name, folder / name)
        for name in (listed(folder) or {}).keys() - new.keys():
            (folder / name).unlink(missing_ok=True)
        os.replace(manifest, folder / MANIFEST)
    shutil.rmtree(pending, ignore_errors=True)
    _fsync(folder)


def _files(stage: Path) -> list[str]:
    """The files below `stage`, as paths relative to it (POSIX), in a stable order."""
    return sorted(p.relative_to(stage).as_posix() for p in stage.rglob("*") if p.is_file())


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fsync(path: Path) -> None:
    """Flush a file's (or a folder's entries') data to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
