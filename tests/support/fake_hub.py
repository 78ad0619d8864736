"""A local Hugging Face Hub and GitHub raw-file server in a thread (`http.server`), for the real
`huggingface_hub` client and `requests`: no test touches the internet.

Hub routes (HEAD and GET): ``/{repo}/resolve/{revision}/{path}``, ``/datasets/…`` and
``/spaces/…`` with the headers `hf_hub_download` reads (``X-Repo-Commit``, ``ETag`` and
``X-Linked-Etag`` = the file's SHA-256, ``Content-Length`` and ``X-Linked-Size``), ranges
(``Range: bytes=N-`` → 206), and ``X-Error-Code`` 404s (RevisionNotFound, EntryNotFound,
RepoNotFound). GitHub: ``/gh/{owner}/{name}/{revision}/{path}`` with ranges.

`seeded_table` makes a table of assets of seeded random bytes served here, with their own
hashes."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import numpy as np

from gesturebench.assets.table import Asset
from tests.support import http_server

RANGE = re.compile(r"bytes=(\d+)-$")


@dataclass
class FakeHub:
    """Files by (repo prefix + repo, commit, path); `main` of each repository; `cut`: path → bytes
    after which GETs of that file are cut off (`cut_then_fail`: and later GETs answer 503);
    `corrupt`: paths served with one byte changed; `requests`: (method, url path, Range header)."""

    files: dict[tuple[str, str, str], bytes] = field(default_factory=dict)
    main: dict[str, str] = field(default_factory=dict)
    github: dict[tuple[str, str, str], bytes] = field(default_factory=dict)
    cut: dict[str, int] = field(default_factory=dict)
    cut_then_fail: bool = True
    corrupt: set[str] = field(default_factory=set)
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)
    _cut_done: set[str] = field(default_factory=set)

    def add(self, repo: str, path: str, data: bytes, repo_type: str = "model") -> str:
        """Serve `data` as `path` of `repo` at a commit of its own (also `main`); its commit."""
        prefix = {"model": "", "dataset": "datasets/", "space": "spaces/"}[repo_type]
        commit = hashlib.sha1(f"{repo}{path}".encode() + data).hexdigest()
        self.files[(prefix + repo, commit, path)] = data
        self.main[prefix + repo] = commit
        return commit

    def add_github(self, repo: str, revision: str, path: str, data: bytes) -> None:
        self.github[(repo, revision, path)] = data

    def start(self) -> FakeHub:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_HEAD(self) -> None:
                hub._serve(self, body=False)

            def do_GET(self) -> None:
                hub._serve(self, body=True)

        self.server = http_server.start(Handler)
        return self

    def stop(self) -> None:
        http_server.stop(self.server)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def github_url(self) -> str:
        return f"{self.url}/gh"

    def _find(self, url_path: str) -> tuple[str, bytes | None, str, str | None]:
        """(commit, data or None, path, error code) of a request's path."""
        if url_path.startswith("/gh/"):
            owner, name, revision, path = url_path[4:].split("/", 3)
            data = self.github.get((f"{owner}/{name}", revision, path))
            return revision, data, path, None if data is not None else "EntryNotFound"
        parts = url_path.lstrip("/").split("/")
        prefix = ""
        if parts[0] in ("datasets", "spaces"):
            prefix, parts = parts[0] + "/", parts[1:]
        repo = prefix + "/".join(parts[:2])
        if len(parts) < 5 or parts[2] != "resolve":
            return "", None, "", "RepoNotFound"
        revision, path = parts[3], "/".join(parts[4:])
        if repo not in self.main:
            return "", None, path, "RepoNotFound"
        commit = self.main[repo] if revision == "main" else revision
        if not any(k[0] == repo and k[1] == commit for k in self.files):
            return commit, None, path, "RevisionNotFound"
        data = self.files.get((repo, commit, path))
        return commit, data, path, None if data is not None else "EntryNotFound"

    def _serve(self, handler: BaseHTTPRequestHandler, body: bool) -> None:
        url_path = handler.path.split("?", 1)[0]
        wanted = handler.headers.get("Range")
        self.requests.append((handler.command, url_path, wanted))
        commit, data, path, error = self._find(url_path)
        if error is not None or data is None:
            handler.send_response(404)
            handler.send_header("X-Error-Code", error or "EntryNotFound")
            handler.send_header("X-Error-Message", f"{error}: {url_path}")
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        if path in self.corrupt:
            data = bytes([data[0] ^ 0xFF]) + data[1:]
        if body and path in self._cut_done and self.cut_then_fail:
            handler.send_response(503)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        etag = f'"{hashlib.sha256(data).hexdigest()}"'
        start = 0
        match = RANGE.match(wanted or "")
        if body and match and int(match.group(1)) <= len(data):
            start = int(match.group(1))
            handler.send_response(206)
            handler.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            handler.send_response(200)
        handler.send_header("X-Repo-Commit", commit)
        handler.send_header("ETag", etag)
        handler.send_header("X-Linked-Etag", etag)
        handler.send_header("X-Linked-Size", str(len(data)))
        handler.send_header("Content-Length", str(len(data) - start))
        handler.send_header("Accept-Ranges", "bytes")
        handler.end_headers()
        if not body:
            return
        payload = data[start:]
        if path in self.cut and path not in self._cut_done:
            self._cut_done.add(path)
            handler.wfile.write(payload[: self.cut[path]])
            handler.wfile.flush()
            handler.close_connection = True
            import socket

            handler.connection.shutdown(socket.SHUT_RDWR)
            return
        handler.wfile.write(payload)

    def heal(self) -> None:
        """Serve every file whole again (after a cut)."""
        self.cut.clear()
        self._cut_done.clear()


def seeded(seed: int, size: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8).tobytes()


def seeded_table(hub: FakeHub, size: int = 50_000) -> list[Asset]:
    """A table in the production table's shape: an EMAGE-like model of two Hub files (one pinned
    at a commit with its hash, one unpinned at main), a metric's file in a space, a GitHub file
    (pinned), and a dataset file; every file seeded random bytes served by `hub`."""
    assets = []
    specs = [
        ("m/config.json", "hub", "owner/model", "config.json", "model", "model=m", True, True),
        ("m/sub/w.bin", "hub", "owner/model", "sub/w.bin", "model", "model=m", False, False),
        (
            "ev/enc.bin",
            "hub",
            "owner/space",
            "w/enc.bin",
            "space",
            "metrics: FGD encoder=emage",
            True,
            False,
        ),
        (
            "ev/speed.npy",
            "github",
            "owner/code",
            "tools/speed.npy",
            "git",
            "metrics: BC mean_speed_file=mean_vel_smplxflame_30.npy",
            True,
            True,
        ),
    ]
    for n, (key, host, repo, path, repo_type, needed, pinned, at_commit) in enumerate(specs):
        data = seeded(n, size + n)
        if host == "hub":
            commit = hub.add(repo, path, data, repo_type)
        else:
            commit = "c" * 40
            hub.add_github(repo, commit, path, data)
        assets.append(
            Asset(
                key=key,
                host=host,  # type: ignore[arg-type]
                repo=repo,
                path=path,
                dest=key,
                revision=commit if at_commit else None,
                sha256=hashlib.sha256(data).hexdigest() if pinned else None,
                size=len(data) if pinned else None,
                licence="test",
                needed_by=(needed,),
                repo_type=repo_type if host == "hub" else "model",
            )
        )
    return assets


def write_table(assets: list[Asset], path: Path) -> Path:
    path.write_text(json.dumps([a.document() for a in assets]))
    return path


def with_changes(asset: Asset, **changes) -> Asset:
    return replace(asset, **changes)


#: what the production table's tags need, as a run composes them (tasks.fetch)
TAGS = {
    "emage": "model=emage",
    "gesturelsm": "model=gesturelsm",
    "fgd": "metrics: FGD encoder=emage",
    "bc": "metrics: BC mean_speed_file=mean_vel_smplxflame_30.npy",
    "vocab": "model=gesturelsm dataset=beat2",
}


def workflow_table(hub: FakeHub, size: int = 20_000) -> list[Asset]:
    """Seeded files under the production table's tags (model=emage and gesturelsm, FGD, BC,
    BEAT2's vocab in the dataset root), in `fetchtest/` folders: Hub and GitHub, pinned and not."""
    assets = []
    for n, (name, tag) in enumerate(TAGS.items()):
        data = seeded(100 + n, size + n)
        github = name == "bc"
        if github:
            revision: str | None = "d" * 40
            hub.add_github("owner/code", "d" * 40, f"{name}.bin", data)
        else:
            commit = hub.add(f"owner/{name}", f"{name}.bin", data)
            revision = commit if n % 2 else None
        assets.append(
            Asset(
                key=f"fetchtest/{name}.bin",
                host="github" if github else "hub",
                repo="owner/code" if github else f"owner/{name}",
                path=f"{name}.bin",
                dest="weights/vocab.pkl" if name == "vocab" else f"fetchtest/{name}.bin",
                revision=revision,
                sha256=hashlib.sha256(data).hexdigest() if n % 2 == 0 else None,
                size=len(data) if n % 2 == 0 else None,
                licence="test",
                needed_by=(tag,),
                root="dataset" if name == "vocab" else "checkpoints",
            )
        )
    return assets


def serve_emage_eval(hub: FakeHub, mean_speed: Path, seed: int = 7) -> dict[str, bytes]:
    """The production table's EMAGE evaluation files served by `hub` where that table says they
    are (its repositories, paths and revisions; `HF_ENDPOINT` and `GESTUREBENCH_GITHUB_ENDPOINT`
    pointed here): the FGD encoder (unpinned) as seeded random weights in the released layout,
    ``{"model_state": {"module.<key>": …}, "epoch": 100}`` saved by torch, and the BC normaliser
    as the real bytes of `mean_speed` (the table pins their SHA-256). Returns the bytes by key."""
    import io

    import torch

    from gesturebench.assets.table import EVAL
    from tests.emage_fgd_support import released_state

    buffer = io.BytesIO()
    state = {f"module.{k}": v for k, v in released_state(seed).items()}
    torch.save({"model_state": state, "epoch": 100}, buffer)
    served = {}
    for asset in EVAL:
        data = buffer.getvalue() if asset.key.endswith(".bin") else mean_speed.read_bytes()
        if asset.host == "github":
            assert asset.revision is not None
            hub.add_github(asset.repo, asset.revision, asset.path, data)
        else:
            hub.add(asset.repo, asset.path, data, asset.repo_type)
        served[asset.key] = data
    return served
