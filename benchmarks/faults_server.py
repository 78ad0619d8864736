"""The study server's fault cases: each a function of a fresh work folder that returns None when the
hardening held, or why it did not. Run alone (`python benchmarks/faults_server.py`) or through
benchmarks/faults.py, which imports `CASES`.

All but three drive the app in process (FastAPI's test client); the kill -9 case serves the study
as a process (`python -m gesturebench.study.server`), kills it while participants arrive and
restarts it; the restart case starts `python launch.py task=study_server`, stops it and restarts
the folder it printed; the start-up case imports the server in a fresh interpreter.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import httpx
from fastapi.testclient import TestClient

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from gesturebench.runtime.errors import DataError  # noqa: E402
from gesturebench.study.server.app import (  # noqa: E402
    Study,
    create_app,
    link_signature,
)
from gesturebench.study.server.design import EntryLimit, StudyDesign  # noqa: E402
from gesturebench.study.server.manifest import read_manifest  # noqa: E402
from gesturebench.study.server.store import Store, open_engine  # noqa: E402
from tests.study_support import (  # noqa: E402
    free_port,
    kill_while_arriving,
    make_stimuli,
    serve_process,
    wait_ready,
)

TOKEN = "faults-admin-token"
ADMIN = {"Authorization": f"Bearer {TOKEN}"}
#: Unsigned ids from links let in (the cases' participants come by id), without a practical limit.
DESIGN = StudyDesign(block_size=4, unsigned=EntryLimit(allowed=True, limit=1000, per_minute=1000))


def study_in(folder: Path, design: StudyDesign = DESIGN, secret: str | None = None) -> Study:
    """A study of three sources on two windows, its database in `folder`."""
    manifest = make_stimuli(folder / "stimuli", ["ground_truth", "a", "b"], ["s00", "s01"])
    store = Store(open_engine(f"sqlite:///{folder / 'study.db'}"))
    return Study(read_manifest(manifest), design, store, TOKEN, secret)


def browser(study: Study) -> TestClient:
    """A fresh browser (no cookie) that shows redirects instead of following them."""
    return TestClient(create_app(study), follow_redirects=False)


def consented(study: Study, pid: str) -> TestClient:
    client = browser(study)
    client.get("/", params={"participant_id": pid})
    client.post("/consent")
    return client


def rated_first_item(study: Study, pid: str) -> TestClient:
    """A participant who has stored the ratings of its first block item."""
    client = consented(study, pid)
    client.post("/instructions")
    participant = next(p for p in study.store.participants() if p.participant_id == pid)
    practice = study.practice[participant.condition]["a"]
    answers = {d: "4" for d in study.design.dimensions(participant.condition)}
    client.post("/practice", data={"stimulus_a": practice, **answers})
    first = participant.block[0]["a"]
    client.post("/ended/0", data={"stimulus": first})
    answered = client.post("/item/0", data={"stimulus_a": first, **answers})
    assert answered.status_code == 303, answered.text
    return client


def lost_entry_reply(folder: Path) -> str | None:
    study = study_in(folder)
    browser(study).get("/", params={"participant_id": "p1"})  # the reply is lost
    again = browser(study).get("/", params={"participant_id": "p1"})
    if again.status_code != 303:
        return f"re-entry after a lost reply answered {again.status_code}"
    consented(study, "p2")
    numbers = [p.number for p in study.store.participants()]
    if numbers != [None, 0]:
        return f"arrival numbers {numbers}: a slot was taken before consent"
    return None


def kill_9_during_arrivals(folder: Path) -> str | None:
    manifest = make_stimuli(folder / "stimuli", ["ground_truth", "a"], ["s00", "s01"])
    port = free_port()
    url = f"http://127.0.0.1:{port}"

    def arrive(pid: str) -> None:
        try:
            with httpx.Client(base_url=url, timeout=5) as client:
                client.get("/", params={"participant_id": pid})
                client.post("/consent")
        except httpx.HTTPError:
            pass

    server = serve_process(folder, manifest, port)
    try:
        kill_while_arriving(url, server, arrive)
        server = serve_process(folder, manifest, port)
        wait_ready(url, time.monotonic() + 120, server)
        for n in range(40):
            with httpx.Client(base_url=url, timeout=30) as client:  # no cookie kept
                status = client.get("/", params={"participant_id": f"k{n:02d}"}).status_code
                if status != 303:
                    return f"k{n:02d} locked out after the restart ({status})"
                client.post("/consent")
    finally:
        server.kill()
        server.wait(10)
    store = Store(open_engine(f"sqlite:///{folder / 'study.db'}"))
    numbers = sorted(p.number for p in store.participants())
    return None if numbers == list(range(40)) else f"slots burnt: {numbers}"


def signed_links(folder: Path) -> str | None:
    study = study_in(folder, StudyDesign(block_size=4), secret="the-secret")
    signature = link_signature("the-secret", "p1")
    for sig, expected in (("", 403), (signature[::-1], 403), (signature, 303)):
        got = browser(study).get("/", params={"participant_id": "p1", "sig": sig}).status_code
        if got != expected:
            return f"sig {sig!r:.12}… answered {got}, expected {expected}"
    return None


def anonymous_entries(folder: Path) -> str | None:
    if browser(study_in(folder / "default")).get("/").status_code != 400:
        return "an entry without an id was let in by default"
    rule = EntryLimit(allowed=True, limit=50, per_minute=5)
    study = study_in(folder / "open", replace(DESIGN, anonymous=rule))
    codes = [browser(study).get("/").status_code for _ in range(8)]
    if codes != [303] * 5 + [429] * 3:
        return f"8 anonymous entries in a row answered {codes} (5 a minute allowed)"
    capped = study_in(folder / "capped", replace(DESIGN, anonymous=replace(rule, limit=2)))
    codes = [browser(capped).get("/").status_code for _ in range(3)]
    return None if codes == [303, 303, 403] else f"a limit of 2 answered {codes}"


def anon_named_ids(folder: Path) -> str | None:
    """Unsigned ids shaped like anonymous ones (`anon-NNN`) must not use up the anonymous cap."""
    rule = EntryLimit(allowed=True, limit=3, per_minute=100)
    study = study_in(folder, replace(DESIGN, anonymous=rule))
    for n in range(5):
        browser(study).get("/", params={"participant_id": f"anon-{n:03d}"})
    got = browser(study).get("/").status_code
    return None if got == 303 else f"an anonymous visitor after 5 ids anon-NNN answered {got}"


def unsigned_ids(folder: Path) -> str | None:
    """Unsigned ids from links: off by default; allowed, capped and rate-limited (200 tried)."""
    default = study_in(folder / "default", StudyDesign(block_size=4))
    got = browser(default).get("/", params={"participant_id": "p1"})
    if got.status_code != 403:
        return f"an unsigned id was let in by default ({got.status_code})"
    rule = EntryLimit(allowed=True, limit=50, per_minute=20)
    study = study_in(folder / "open", StudyDesign(block_size=4, unsigned=rule))
    codes = [
        browser(study).get("/", params={"participant_id": f"flood-{n}"}).status_code
        for n in range(200)
    ]
    if codes != [303] * 20 + [429] * 180:
        return f"200 unsigned ids in a row: {codes.count(303)} let in (20 a minute allowed)"
    capped = study_in(folder / "capped", StudyDesign(block_size=4, unsigned=replace(rule, limit=2)))
    codes = [
        browser(capped).get("/", params={"participant_id": f"u{n}"}).status_code for n in range(3)
    ]
    return None if codes == [303, 303, 403] else f"a limit of 2 answered {codes}"


def version_3_database(folder: Path) -> str | None:
    """A study database written before the entry kind was stored opens, its ratings intact."""
    study = study_in(folder)
    rated_first_item(study, "p1")
    before = len(study.store.responses())
    with study.store.engine.begin() as conn:
        conn.exec_driver_sql("ALTER TABLE participants DROP COLUMN entry")
        conn.exec_driver_sql("UPDATE schema_version SET version = 3")
    study.store.engine.dispose()
    try:
        again = study_in(folder)
    except DataError as err:
        return f"a version-3 database was refused: {err}"
    after = len(again.store.responses())
    return None if after == before else f"{before} ratings before the migration, {after} after"


def restart_entry(folder: Path) -> str | None:
    """`python launch.py task=study_server` stopped, then `python -m gesturebench.study.server`
    on the study folder it printed: the restarted server answers its entry page."""
    manifest = make_stimuli(folder / "stimuli", ["ground_truth", "a"], ["s00"])
    port = free_port()
    launch = [
        *(sys.executable, str(REPO / "launch.py"), "task=study_server"),
        *(f"task.manifest={manifest}", f"task.port={port}", f"paths.root={folder}"),
        *("task.design.unsigned.allowed=true", "logger=none"),
    ]
    with open(folder / "launch.log", "w") as log:
        server = subprocess.Popen(launch, cwd=folder, stdout=log, stderr=log)
    try:
        wait_ready(f"http://127.0.0.1:{port}", time.monotonic() + 300, server)
    except SystemExit as stop:
        return f"the launch did not serve: {stop}"
    finally:
        server.terminate()
        server.wait(30)
    printed = re.search(r"study folder: (\S+)", (folder / "launch.log").read_text())
    if printed is None:
        return "the launch printed no study folder"
    restart = [sys.executable, "-m", "gesturebench.study.server", printed.group(1)]
    with open(folder / "restart.log", "w") as log:
        server = subprocess.Popen([*restart, f"task.port={port}"], stdout=log, stderr=log)
    try:
        wait_ready(f"http://127.0.0.1:{port}", time.monotonic() + 120, server)
        got = httpx.get(f"http://127.0.0.1:{port}/", params={"participant_id": "p1"})
    except SystemExit as stop:
        said = (folder / "restart.log").read_text()[-200:]
        return f"the restart entry did not serve: {stop} ({said})"
    finally:
        server.terminate()
        server.wait(30)
    return (
        None if got.status_code == 303 else f"the restarted entry page answered {got.status_code}"
    )


def foreign_stimulus(folder: Path) -> str | None:
    study = study_in(folder)
    alice, bob = consented(study, "alice"), consented(study, "bob")
    people = {p.participant_id: p for p in study.store.participants()}
    theirs = study.clips(people["bob"]) - study.clips(people["alice"])
    refused = [alice.get(f"/media/{sid}").status_code for sid in theirs]
    if not theirs or set(refused) != {403}:
        return f"another block's clips answered {refused}"
    own = bob.get(f"/media/{next(iter(theirs))}").status_code
    return None if own == 200 else f"a session's own clip answered {own}"


def huge_rating(folder: Path) -> str | None:
    study = study_in(folder)
    client = rated_first_item(study, "p1")
    participant = study.store.participants()[0]
    clip = participant.block[1]["a"]
    client.post("/ended/1", data={"stimulus": clip})
    answers = {d: "4" * 5000 for d in study.design.dimensions(participant.condition)}
    try:
        got = client.post("/item/1", data={"stimulus_a": clip, **answers}).status_code
    except ValueError as err:
        return f"a 5,000-digit rating raised {err}"
    return None if got == 422 else f"a 5,000-digit rating answered {got}"


def admin_token_in_query(folder: Path) -> str | None:
    client = browser(study_in(folder))
    for where in ("/admin/progress", "/admin/export.csv"):
        if client.get(where, params={"token": TOKEN}).status_code != 403:
            return f"{where} accepted the token in the query string"
        if client.get(where, headers={"Authorization": TOKEN}).status_code != 403:
            return f"{where} accepted the token without 'Bearer '"
        if client.get(where, headers=ADMIN).status_code != 200:
            return f"{where} refused the Bearer token"
    return None


def security_headers(folder: Path) -> str | None:
    client = consented(study_in(folder), "p1")
    wanted = {
        "content-security-policy": "frame-ancestors 'none'",
        "x-frame-options": "DENY",
        "x-content-type-options": "nosniff",
        "referrer-policy": "same-origin",
    }
    for path in ("/study", "/nothing", "/healthz"):
        headers = client.get(path).headers
        for name, value in wanted.items():
            if value not in headers.get(name, ""):
                return f"{path}: no {name}: {value}"
    return None


def cross_origin_post(folder: Path) -> str | None:
    study = study_in(folder)
    client = browser(study)
    client.get("/", params={"participant_id": "p1"})
    got = client.post("/consent", headers={"Origin": "https://evil.example"}).status_code
    if got != 403 or study.store.participants()[0].step != "consent":
        return f"a cross-origin consent answered {got}"
    same = client.post("/consent", headers={"Origin": "http://testserver"}).status_code
    return None if same == 303 else f"a same-origin consent answered {same}"


def reset(folder: Path) -> str | None:
    study = study_in(folder)
    rated_first_item(study, "p1")
    if browser(study).get("/", params={"participant_id": "p1"}).status_code != 409:
        return "an id with stored ratings was taken over without a reset"
    url = "/admin/participants/p1/reset"
    if browser(study).post(url).status_code != 403:
        return "a reset without the token was accepted"
    if browser(study).post(url, headers=ADMIN).status_code != 200:
        return "the experimenter's reset failed"
    client = browser(study)
    if client.get("/", params={"participant_id": "p1"}).status_code != 303:
        return "the reset id could not enter"
    page = client.get("/study").text
    return None if 'action="/item/1"' in page else "the reset id did not resume where it stopped"


def error_pages(folder: Path) -> str | None:
    study = study_in(folder)
    rated_first_item(study, "p1")
    for response in (
        browser(study).get("/", params={"participant_id": "p1"}),
        browser(study).get("/study"),
        browser(study).get("/", params={"participant_id": "<bad>"}),
    ):
        if not response.headers["content-type"].startswith("text/html"):
            return f"{response.status_code} answered {response.headers['content-type']}"
    return None


def start_up_imports(folder: Path) -> str | None:
    """The restart entry and the server task import no torch, Lightning or scikit-learn."""
    probe = (
        "import sys, gesturebench.study.server.__main__, gesturebench.tasks.study_server;"
        "print([m for m in ('torch', 'pytorch_lightning', 'sklearn') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, cwd=folder
    )
    heavy = out.stdout.strip()
    return None if heavy == "[]" else f"the server imports {heavy or out.stderr[-200:]}"


_CASES: list[tuple[str, Callable[[Path], str | None]]] = [
    ("study server: lost entry reply (re-entry, no slot burnt)", lost_entry_reply),
    ("study server: kill -9 while participants arrive", kill_9_during_arrivals),
    ("study server: signed links", signed_links),
    ("study server: anonymous entries off, capped, rate-limited", anonymous_entries),
    ("study server: ids anon-NNN leave the anonymous cap alone", anon_named_ids),
    ("study server: unsigned ids off, capped, rate-limited", unsigned_ids),
    ("study server: version-3 database migrated", version_3_database),
    ("study server: restart entry on the folder the launch printed", restart_entry),
    ("study server: another block's stimulus", foreign_stimulus),
    ("study server: 5,000-digit rating", huge_rating),
    ("study server: admin token in the query string", admin_token_in_query),
    ("study server: security headers", security_headers),
    ("study server: cross-origin POST", cross_origin_post),
    ("study server: experimenter reset", reset),
    ("study server: participant errors are pages", error_pages),
    ("study server: start-up without torch/Lightning", start_up_imports),
]


def _own_folder(case: Callable[[Path], str | None]) -> Callable[[Path], str | None]:
    """`case` run in a fresh folder of its own below the shared workdir (each case's study
    database starts empty: faults.py hands every case the same folder)."""
    return lambda folder: case(Path(tempfile.mkdtemp(prefix="server-", dir=folder)))


CASES = [(name, _own_folder(case)) for name, case in _CASES]


def main() -> None:
    failed = 0
    for name, case in CASES:
        with tempfile.TemporaryDirectory(prefix="gb-faults-server-") as tmp:
            reason = case(Path(tmp))
        failed += reason is not None
        print(f"{name}: {'held' if reason is None else f'failed ({reason})'}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
