"""The study server's test support, shared by tests/test_study_server.py and
benchmarks/bench_study_server.py: tiny stimuli with a manifest in `task=render`'s format, a
simulated participant that walks a running study's pages over HTTP (TestClient or a real server),
waiting for a server started as a process, a small study on SQLite, and the check that an export
equals what a session clicked."""

from __future__ import annotations

import csv
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import imageio.v2 as imageio
import numpy as np
import pandas as pd

from gesturebench.runtime.weights import sha256_file
from gesturebench.study.schema import MANIFEST_COLUMNS
from gesturebench.study.server.app import Study
from gesturebench.study.server.design import AttentionChecks, EntryLimit, StudyDesign
from gesturebench.study.server.export import ratings_table
from gesturebench.study.server.manifest import read_manifest
from gesturebench.study.server.serve import CONFIG_FILE, ServerOptions, save_config
from gesturebench.study.server.store import Store, open_engine
from tests.helpers import REPO


def make_stimuli(
    folder: Path,
    sources: list[str],
    sequences: list[str],
    conditions: tuple[str, ...] = ("muted", "audio"),
    frames: int = 3,
    fps: int = 10,
    video: bool = True,
) -> Path:
    """One `frames`-frame MP4 (a flat colour of its own) per (condition, source, sequence), or with
    `video=False` a few placeholder bytes, and the manifest; returns the manifest's path."""
    clips = folder / "clips"
    clips.mkdir(parents=True, exist_ok=True)
    rows = []
    for c, condition in enumerate(conditions):
        for s, source in enumerate(sources):
            for q, sequence in enumerate(sequences):
                sid = f"{condition}-{source}-{sequence}"
                path = clips / f"{sid}.mp4"
                if video:
                    colour = np.array([40 * s % 256, 60 * q % 256, 120 * c % 256], np.uint8)
                    still = np.broadcast_to(colour, (32, 32, 3))
                    imageio.mimwrite(path, [still] * frames, fps=fps, macro_block_size=16)
                else:
                    path.write_bytes(sid.encode())
                rows.append(
                    [sid, source, sequence, 0.0, frames / fps, condition, f"clips/{sid}.mp4"]
                    + [sha256_file(path)]
                )
    manifest = folder / "manifest.csv"
    with open(manifest, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(MANIFEST_COLUMNS)
        writer.writerows(rows)
    return manifest


@dataclass
class Page:
    """What a simulated participant reads off a question page."""

    action: str
    stimuli: list[str]
    dimensions: list[str]
    notice: str | None
    # where the page's script reports a clip played to its end (block items only)
    ended: str | None


def read_page(html: str) -> Page | None:
    """The question page's form, or None (a text page)."""
    action = re.search(r'<form method="post" action="(/(?:item/\d+|practice))"', html)
    if action is None:
        return None
    notice = re.search(r'id="notice">(.*?)</p>', html, re.S)
    ended = re.search(r'data-ended="(/ended/\d+)"', html)
    return Page(
        action.group(1),
        re.findall(r'name="stimulus_[ab]" value="([^"]+)"', html),
        list(dict.fromkeys(re.findall(r'type="radio" name="(\w+)"', html))),
        notice.group(1) if notice else None,
        ended.group(1) if ended else None,
    )


def play_to_end(client: httpx.Client, page: Page) -> None:
    """What the page's script does when each clip has played to its end."""
    if page.ended:
        for sid in page.stimuli:
            response = client.post(page.ended, data={"stimulus": sid})
            assert response.status_code == 204, response.text


def asked_answer(notice: str) -> str:
    """The answer an attention check's default instruction asks for: a rating or a clip (a, b)."""
    found = re.search(r"answer (Clip [AB]|\d)", notice)
    assert found, notice
    return found.group(1)[-1].lower()


@dataclass
class Session:
    """A participant's answers as posted: (form action, stimuli, answers), and its completion
    code."""

    answers: list[tuple[str, list[str], dict]] = field(default_factory=list)
    code: str | None = None


def participate(
    client: httpx.Client, participant_id: str | None, decide: Callable[[Page], dict]
) -> Session:
    """Walk the study as one participant, playing each clip to its end and answering each question
    page with `decide(page)` (a dimension → answer mapping); every response must succeed."""
    session = Session()
    query = {"participant_id": participant_id} if participant_id else {}
    response = client.get("/", params=query, follow_redirects=True)
    for _ in range(1000):
        assert response.status_code == 200, response.text
        html = response.text
        code = re.search(r"completion code is (\w+)", html)
        if code:
            session.code = code.group(1)
            return session
        page = read_page(html)
        if page is None:
            action = re.search(r'action="(/\w+)"', html)
            assert action, html
            response = client.post(action.group(1), follow_redirects=True)
            continue
        play_to_end(client, page)
        answers = decide(page)
        form = {f"stimulus_{s}": sid for s, sid in zip("ab", page.stimuli)}
        response = client.post(page.action, data={**form, **answers}, follow_redirects=True)
        session.answers.append((page.action, page.stimuli, answers))
    raise AssertionError("the study never ended")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, deadline: float, server: subprocess.Popen) -> None:
    """Until `url`/healthz answers (by `deadline`, a `time.monotonic()`; SystemExit otherwise)."""
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}")
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit("the server did not start in time")


def kill_while_arriving(url: str, server: subprocess.Popen, arrive: Callable[[str], None]) -> None:
    """Once `url` answers, 40 participants (ids k00..k39) `arrive` on 8 threads, and the server is
    killed with SIGKILL as soon as 8 of them are through: the others lose their replies."""
    wait_ready(url, time.monotonic() + 120, server)
    with ThreadPoolExecutor(8) as pool:
        arrivals = [pool.submit(arrive, f"k{n:02d}") for n in range(40)]
        while sum(f.done() for f in arrivals) < 8:
            time.sleep(0.01)
        server.send_signal(signal.SIGKILL)
        server.wait(10)


def serve_process(folder: Path, manifest: Path, port: int) -> subprocess.Popen:
    """The study of `folder` served by `python -m gesturebench.study.server` (the restart entry)
    from its saved config, written the first time as `task=study_server` writes it (4 clips a
    block, unsigned ids let in, the database `folder`/study.db)."""
    if not (folder / CONFIG_FILE).is_file():
        links = EntryLimit(allowed=True, limit=10_000, per_minute=10_000)
        options = ServerOptions(
            manifest=str(manifest), port=port, design=StudyDesign(block_size=4, unsigned=links)
        )
        save_config(folder, options, f"sqlite:///{folder / 'study.db'}")
    command = [sys.executable, "-m", "gesturebench.study.server", str(folder)]
    with open(folder / "server.log", "a") as log:
        return subprocess.Popen(command, cwd=REPO, stdout=log, stderr=log)


#: the admin token of `make_study`'s studies
TOKEN = "s3cret-admin-token"
#: Unsigned ids from links let in, without a practical limit: the tests' participants come by id.
LINKS = EntryLimit(allowed=True, limit=10_000, per_minute=10_000)
SMALL = StudyDesign(block_size=4, attention=AttentionChecks(after=[2]), unsigned=LINKS)


def make_study(manifest, tmp_path, design=SMALL, token=TOKEN) -> Study:
    tmp_path.mkdir(parents=True, exist_ok=True)
    store = Store(open_engine(f"sqlite:///{tmp_path / 'study.db'}"))
    return Study(read_manifest(manifest), design, store, token)


def exported_as_clicked(study: Study, participant_id: str, session) -> None:
    """The export of `participant_id` equals what its session posted, row for row."""
    participant = next(p for p in study.store.participants() if p.participant_id == participant_id)
    expected = []
    for action, clips, answers in session.answers:
        if action == "/practice":
            continue
        clip = study.stimuli[clips[0]]
        if participant.block[int(action.rsplit("/", 1)[1])]["kind"] == "attention":
            expected.append((clip.source, clip.sequence_id, "attention", None, True))
        else:
            expected += [
                (clip.source, clip.sequence_id, d, int(v), None) for d, v in answers.items()
            ]
    table = ratings_table(study.store)
    table = table[table["participant_id"] == participant_id]
    got = [
        (
            r.source,
            r.sequence_id,
            r.dimension,
            None if pd.isna(r.rating) else int(r.rating),
            None if pd.isna(r.passed) else bool(r.passed),
        )
        for r in table.itertuples()
    ]
    assert got == expected
    assert set(table["condition"]) == {participant.condition}
