"""A cache entry damaged as a killed write or a bad disk leaves it."""

from __future__ import annotations

from pathlib import Path


def damage(path: Path, how: str) -> None:
    """Truncate `path` to half its bytes, or garble its first bytes."""
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] if how == "truncate" else b"\x00garbled" + data[9:])
