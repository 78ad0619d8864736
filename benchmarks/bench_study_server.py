"""Load test of the study server: N simulated participants at once against `task=study_server`
running under uvicorn on loopback, each taking a whole block; then the database must hold exactly
the submitted answers (none lost, none doubled). Prints request latency percentiles.

    python benchmarks/bench_study_server.py --participants 100 --block 25

Bounded: the server is a child process on 127.0.0.1 that is stopped at the end (or after
`--timeout` seconds, whatever happens); the stimuli and database live in a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from gesturebench.study.server.export import ratings_table  # noqa: E402
from gesturebench.study.server.manifest import read_manifest  # noqa: E402
from gesturebench.study.server.store import Store, open_engine  # noqa: E402
from tests.study_support import (  # noqa: E402
    Page,
    asked_answer,
    free_port,
    make_stimuli,
    participate,
    wait_ready,
)


def start_server(folder: Path, manifest: Path, port: int, block: int) -> subprocess.Popen:
    command = [
        sys.executable,
        str(REPO / "launch.py"),
        "task=study_server",
        f"task.manifest={manifest}",
        f"task.port={port}",
        f"task.design.block_size={block}",
        "task.design.unsigned.allowed=true",  # the simulated participants' ids are not signed
        "task.design.unsigned.limit=100000",
        "task.design.unsigned.per_minute=100000",
        f"paths.root={folder}",
        f"hydra.run.dir={folder / 'outputs/study_server/study'}",
        "logger=none",
    ]
    env = {**os.environ, "GESTUREBENCH_STUDY_TOKEN": "load-test"}
    return subprocess.Popen(command, cwd=folder, env=env)


def one_participant(url: str, number: int, latencies: list[float]):
    """A participant answering at random (attention checks as asked); returns its id, the answers
    it posted and the pages that were attention checks."""
    rng = np.random.default_rng(number)
    checks: set[str] = set()

    def decide(page: Page) -> dict:
        if page.notice:
            checks.add(page.action)
            return {d: int(asked_answer(page.notice)) for d in page.dimensions}
        return {d: int(rng.integers(1, 8)) for d in page.dimensions}

    def started(request: httpx.Request) -> None:
        request.extensions["started"] = time.perf_counter()

    def answered(response: httpx.Response) -> None:
        latencies.append(time.perf_counter() - response.request.extensions["started"])

    pid = f"load-{number:03d}"
    hooks = {"request": [started], "response": [answered]}
    with httpx.Client(base_url=url, timeout=60, event_hooks=hooks) as client:
        return pid, participate(client, pid, decide), checks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=100)
    parser.add_argument("--block", type=int, default=25)
    parser.add_argument("--timeout", type=float, default=900.0)
    args = parser.parse_args()
    deadline = time.monotonic() + args.timeout
    with tempfile.TemporaryDirectory(prefix="gb-study-load-") as tmp:
        folder = Path(tmp)
        sources = ["ground_truth", "a", "b", "c", "d"]
        manifest = make_stimuli(
            folder / "stimuli", sources, [f"s{i:02d}" for i in range(15)], video=False
        )
        port = free_port()
        server = start_server(folder, manifest, port, args.block)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_ready(url, deadline, server)
            latencies: list[float] = []
            began = time.perf_counter()
            with ThreadPoolExecutor(args.participants) as pool:
                futures = [
                    pool.submit(one_participant, url, n, latencies)
                    for n in range(args.participants)
                ]
                sessions = [
                    f.result(timeout=max(1.0, deadline - time.monotonic())) for f in futures
                ]
            wall = time.perf_counter() - began
        finally:
            server.terminate()
            server.wait(30)
        stimuli = read_manifest(manifest, verify=False)
        posted: Counter = Counter()
        for pid, session, checked in sessions:
            for action, clips, answers in session.answers:
                if action.startswith("/item/") and action not in checked:
                    clip = stimuli[clips[0]]
                    posted.update(
                        (pid, clip.source, clip.sequence_id, d, v) for d, v in answers.items()
                    )
        store = Store(open_engine(f"sqlite:///{folder / 'outputs/study_server/study/study.db'}"))
        table = ratings_table(store)
        rated = table[table["dimension"] != "attention"]
        stored = Counter(
            (r.participant_id, r.source, r.sequence_id, r.dimension, int(r.rating))
            for r in rated.itertuples()
        )
        checks = table[table["dimension"] == "attention"]
        lat = np.array(latencies) * 1000
        print(
            f"{args.participants} participants, {len(lat)} requests in {wall:.1f} s "
            f"({len(lat) / wall:.0f} requests/s); latency ms: p50 {np.percentile(lat, 50):.1f}, "
            f"p95 {np.percentile(lat, 95):.1f}, max {lat.max():.1f}"
        )
        print(
            f"database: {len(rated)} ratings and {len(checks)} attention checks; "
            f"submitted {sum(posted.values())} ratings and every check passed"
        )
        complete = [p for p in store.participants() if p.step == "complete"]
        if stored != posted or len(complete) != args.participants or not checks["passed"].all():
            raise SystemExit("MISMATCH: the database does not hold exactly the submitted answers")
        print("OK: every submitted rating is stored exactly once; every participant completed")


if __name__ == "__main__":
    main()
