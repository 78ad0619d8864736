"""The inputs a run read, by SHA-256 (results.json `inputs`), and where they differ now: what
`task=verify` checks before it re-runs a finished run.

Recorded: each file of the scored sequences in the dataset folder (motion, audio, TextGrid and sem
files, those that exist) and the split file, by their path relative to the dataset's root, and the
body model file. The learned encoders' and released weights' hashes are recorded by the metrics and
models themselves (`encoders`, `model_info`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gesturebench.body.procedural import default_model_path
from gesturebench.data.beat2 import SPLIT_FILE, sequence_paths
from gesturebench.runtime.weights import sha256_file


def dataset_files(root: str | Path, ids: list[str]) -> dict[str, str]:
    """{path relative to `root`: SHA-256} of the split file and of every file of sequences `ids`
    that exists under `root`."""
    root = Path(root)
    paths = [root / SPLIT_FILE]
    for sequence_id in ids:
        files = sequence_paths(root, sequence_id)
        paths += [files.motion, files.audio, files.textgrid, files.sem]
    return {p.relative_to(root).as_posix(): sha256_file(p) for p in paths if p.is_file()}


def body_model_file(node: dict) -> Path:
    """The body model file of a resolved `body_model` config: its `model_path`, else the procedural
    model's file in its `checkpoints_dir`."""
    path = node.get("model_path")
    if path:
        return Path(path).expanduser()
    return default_model_path(node.get("checkpoints_dir") or "checkpoints")


def input_hashes(config: dict, dataset: Any) -> dict:
    """results.json `inputs` of a run of resolved config `config` that scored `dataset` (its
    records): the dataset's root and files (`dataset_files`; None where the records come from no
    BEAT2 folder, e.g. study windows) and the body model file's path and SHA-256."""
    root = getattr(dataset, "root", None)
    ids = getattr(dataset, "ids", None)
    files = dataset_files(root, list(ids)) if root is not None and ids is not None else None
    out: dict[str, Any] = {"dataset": {"root": str(root) if root else None, "files": files}}
    body = config.get("body_model")
    if isinstance(body, dict):
        path = body_model_file(body)
        out["body_model"] = {
            "path": str(path),
            "sha256": sha256_file(path) if path.is_file() else None,
        }
    return out


def changed_inputs(recorded: dict, dataset_root: str | Path, body_node: dict) -> list[str]:
    """One line per recorded input (`input_hashes`) whose file under `dataset_root` (the dataset's
    folder now) or at the body model's path (of `body_node`, the `body_model` config now) is
    missing or has another SHA-256 than recorded."""
    problems = []
    root = Path(dataset_root)
    files = (recorded.get("dataset") or {}).get("files") or {}
    if files and not root.is_dir():
        problems.append(
            f"dataset.root {root} does not exist (give the dataset's folder with"
            """ 'task.overrides=["dataset.root=..."]')"""
        )
        files = {}
    for name, digest in files.items():
        path = root / name
        problems += _differs(f"dataset file {path}", path, digest)
    body = recorded.get("body_model")
    if body and body.get("sha256"):
        path = body_model_file(body_node)
        problems += _differs(f"body model file {path}", path, body["sha256"])
    return problems


def _differs(what: str, path: Path, digest: str) -> list[str]:
    if not path.is_file():
        return [f"{what} is missing (results.json records sha256 {digest[:12]})"]
    now = sha256_file(path)
    if now != digest:
        return [f"{what} changed: sha256 {now[:12]}, results.json records {digest[:12]}"]
    return []
