"""Atomic file writes (temporary file next to the target + rename) and one-line error text."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path next to `path` (same suffix); on success rename it onto `path`, else
    remove it.

    A crash mid-write therefore never leaves a truncated file under the final name. Parent folders
    are created. An OSError that names no file (a write to a full disk) is given `path`'s name, so
    that its one-line message says where.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp{path.suffix}")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException as err:
        tmp.unlink(missing_ok=True)
        if isinstance(err, OSError) and err.filename is None:
            err.filename = str(path)
        raise


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write text or bytes to `path` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data.encode() if isinstance(data, str) else data)


def one_line(exc: BaseException) -> str:
    """An exception's text on one line (library messages may carry newlines)."""
    return " ".join(str(exc).split()) or type(exc).__name__
