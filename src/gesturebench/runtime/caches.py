"""Cache entries that prove their content, for every cache kind (speech onsets, BC's speed
statistics, generated motion, auto-trained encoders, the procedural body model).

An entry is its payload file and a sidecar (`<name>.meta.json`, or the file a kind names) holding
the producer and its version, the inputs of the entry's key, the payload's SHA-256 and the schema
of its arrays (shape, dtype, value range; values are always finite). A read verifies all of it
against what the caller expects: an entry that is missing its sidecar (written by an older
version), truncated, garbled, replaced by another valid file, or edited together with its sidecar
into values outside the schema is set aside as `<name>.corrupt` with its sidecar, logged in one
warning line, and the caller recomputes it. A parsable but wrong cache never gives a number.

A kind may name a folder of entries shipped with the package (`shipped`, e.g. mini-BEAT2's speech
onsets): an entry missing from the cache is looked up there by its file name, copied into the cache
with its sidecar, and then read like any entry, so a shipped entry is used only where its producer,
key (its inputs' hashes) and content are the ones this run expects.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np

from gesturebench.runtime.atomic import one_line, write_atomic
from gesturebench.runtime.errors import CheckpointError
from gesturebench.runtime.weights import sha256_file

T = TypeVar("T")

log = logging.getLogger(__name__)

#: the suffix a damaged cache entry is renamed with (kept for inspection, never read again)
CORRUPT = ".corrupt"
#: the default sidecar of `<name>`: `<name>.meta.json`
META = ".meta.json"


class Damaged(Exception):
    """A cache entry does not prove its content; the message says what differs."""


@dataclass(frozen=True)
class Schema:
    """What one payload array must be: its shape (None: any shape; a None axis: any length), its
    numpy dtype kind (one of `kinds`: f float, i/u integer, b bool), its values finite and within
    [`low`, `high`] (per element along the last axis when a tuple), non-decreasing if `sorted`."""

    shape: tuple[int | None, ...] | None = None
    kinds: str = "f"
    low: float | tuple[float, ...] = -math.inf
    high: float | tuple[float, ...] = math.inf
    sorted: bool = False

    def violation(self, array: Any) -> str | None:
        """Why `array` breaks this schema, or None."""
        a = np.asarray(array)
        if self.shape is not None and (
            a.ndim != len(self.shape)
            or any(want is not None and want != got for want, got in zip(self.shape, a.shape))
        ):
            return f"shape {a.shape}, expected {self.shape}"
        if a.dtype.kind not in self.kinds:
            return f"dtype {a.dtype}, expected kind {self.kinds!r}"
        if a.dtype.kind in "fc" and not np.isfinite(a).all():
            return f"{int((~np.isfinite(a)).sum())} non-finite values"
        if a.size and ((a < np.asarray(self.low)).any() or (a > np.asarray(self.high)).any()):
            return f"values in [{a.min():g}, {a.max():g}], outside {self._range()}"
        if self.sorted and (np.diff(a, axis=0) < 0).any():
            return "values not sorted"
        return None

    def _range(self) -> str:
        low, high = np.min(self.low), np.max(self.high)
        return f"[{low:g}, {high:g}]"


#: the weights and buffers of a checkpoint: numbers, the floating ones finite
WEIGHTS = Schema(kinds="biuf")


def check_weights(state: Mapping[str, Any], path: str | Path) -> None:
    """`CheckpointError` naming `path` and the first tensor of `state` that is not finite numbers:
    NaN weights would otherwise surface later as an unrelated error (a linear-algebra failure)."""
    for name, value in state.items():
        if hasattr(value, "detach"):  # a torch tensor (bfloat16 has no numpy dtype)
            value = value.detach().cpu()
            value = (value.double() if value.is_floating_point() else value).numpy()
        if (problem := WEIGHTS.violation(value)) is not None:
            raise CheckpointError(f"{path}: unusable weights, {name} has {problem}")


def file_state(path: Path) -> tuple[int, int, int, int, int]:
    """The state of the file at `path` (device, inode, size, modification and change times in ns):
    any write changes it, even one that sets the modification time back, since the change time
    cannot be set. What a process has read or verified of a file holds while this is unchanged."""
    stat = path.stat()
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


@dataclass(frozen=True)
class CacheEntry(Generic[T]):
    """One cache entry of a kind: where it lies, the `producer` (what computes it, with a version
    bumped when its output changes), the inputs its `key` (file name) hashes, the `schema` of its
    arrays (one `Schema` for every array, or one per name), `decode` (path → value) and `arrays`
    (value → named arrays that the schema checks). `sidecar` defaults to `<name>.meta.json`;
    `shipped` is a folder of entries shipped with the package, looked in when the cache lacks this
    one."""

    path: Path
    producer: str
    key: Mapping[str, Any]
    schema: Schema | Mapping[str, Schema]
    decode: Callable[[Path], T]
    arrays: Callable[[T], Mapping[str, Any]]
    sidecar: Path | None = field(default=None)
    shipped: Path | None = field(default=None)

    @property
    def meta_path(self) -> Path:
        return self.sidecar or self.path.with_name(self.path.name + META)

    def read(self) -> T | None:
        """The verified value, or None when there is no entry (in the cache or shipped) or it was
        set aside (damaged)."""
        if not self.path.exists() and not self._copy_shipped():
            return None
        try:
            return self._verified()
        except Exception as exc:  # a damage check, or whatever a damaged file makes decode raise
            self.set_aside(one_line(exc))
            return None

    def write(self, data: bytes, extra: Mapping[str, Any] | None = None) -> None:
        """Write the payload `data` and its sidecar (with the `extra` fields, not verified),
        atomically, the sidecar first: a reader never sees a payload without its sidecar."""
        meta = {**self._expected(), "sha256": hashlib.sha256(data).hexdigest(), **(extra or {})}
        write_atomic(self.meta_path, json.dumps(meta, indent=1, default=str) + "\n")
        write_atomic(self.path, data)

    def _copy_shipped(self) -> bool:
        """Copy the shipped entry of this name and its sidecar into the cache (the sidecar
        first); whether there was one."""
        if self.shipped is None:
            return False
        payload, sidecar = self.shipped / self.path.name, self.shipped / self.meta_path.name
        if not (payload.is_file() and sidecar.is_file()):
            return False
        write_atomic(self.meta_path, sidecar.read_bytes())
        write_atomic(self.path, payload.read_bytes())
        return True

    def set_aside(self, problem: str) -> None:
        """Rename the entry and its sidecar `<name>.corrupt` and log one line: the caller
        recomputes it."""
        for source in (self.path, self.meta_path):
            with suppress(FileNotFoundError):  # no sidecar, or another process was first
                os.replace(source, source.with_name(source.name + CORRUPT))
        log.warning(
            "%s: damaged cache entry (%s), set aside as %s and recomputed",
            self.path,
            problem[:300],
            self.path.name + CORRUPT,
        )

    def _expected(self) -> dict[str, Any]:
        """The sidecar's verified fields but the checksum, as JSON reads them back."""
        schema = self.schema
        described = (
            asdict(schema)
            if isinstance(schema, Schema)
            else {name: asdict(s) for name, s in schema.items()}
        )
        fields = {"producer": self.producer, "key": dict(self.key), "schema": described}
        return json.loads(json.dumps(fields, default=str))

    def _verified(self) -> T:
        try:
            meta = json.loads(self.meta_path.read_text())
        except FileNotFoundError:
            raise Damaged(f"no sidecar {self.meta_path.name} (an older version's entry)") from None
        if not isinstance(meta, dict):
            raise Damaged(f"sidecar {self.meta_path.name} is not a JSON object")
        for name, want in self._expected().items():
            if meta.get(name) != want:
                raise Damaged(f"sidecar {name} {meta.get(name)!r}, expected {want!r}")
        if meta.get("sha256") != sha256_file(self.path):
            raise Damaged("SHA-256 differs from its sidecar's")
        value = self.decode(self.path)
        arrays = self.arrays(value)
        if not isinstance(self.schema, Schema) and set(arrays) != set(self.schema):
            raise Damaged(f"arrays {sorted(arrays)}, expected {sorted(self.schema)}")
        for name, array in arrays.items():
            schema = self.schema if isinstance(self.schema, Schema) else self.schema[name]
            if (problem := schema.violation(array)) is not None:
                raise Damaged(f"{name}: {problem}")
        return value
