"""The study server (`task=study_server`, `task=study_export`) through FastAPI's test client: the
participant flow, every route's refusals (nothing stored), resumption, balanced blocks, export, and
the round trip synthetic participants → export → analysis. The real-browser test is in
tests/test_study_browser.py, the load test in benchmarks/bench_study_server.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import httpx
import numpy as np
import pandas as pd
import pytest
from fastapi.testclient import TestClient
from hydra.errors import ConfigCompositionException
from sqlalchemy import event, func, select

from gesturebench.run.config import build
from gesturebench.runtime.errors import ConfigError, DataError
from gesturebench.study.analysis import AnalysisOptions, analyze
from gesturebench.study.pairwise import pairwise_csv, read_pairwise
from gesturebench.study.ratings import ratings_csv, read_ratings, require_valid
from gesturebench.study.schema import CONDITIONS, SCALE
from gesturebench.study.server.__main__ import main as restart_main
from gesturebench.study.server.app import SESSION_COOKIE, Study, create_app, link_signature
from gesturebench.study.server.design import AttentionChecks, EntryLimit, StudyDesign
from gesturebench.study.server.export import pairwise_table, ratings_table
from gesturebench.study.server.manifest import read_manifest
from gesturebench.study.server.serve import ServerOptions, save_config
from gesturebench.study.server.store import SCHEMA_VERSION, Store, open_engine, responses
from gesturebench.study.synthetic import SyntheticStudy, latent_ratings, usable_terms
from gesturebench.tasks.job import Job
from gesturebench.tasks.study_server import database_url
from tests.conftest import RENDERED_WINDOWS
from tests.helpers import REPO
from tests.launch import command
from tests.study_support import (
    SMALL,
    TOKEN,
    Page,
    asked_answer,
    exported_as_clicked,
    free_port,
    kill_while_arriving,
    make_stimuli,
    make_study,
    participate,
    serve_process,
    wait_ready,
)
from tests.support.requires import require_postgres
from tests.support.study_analysis import FAST, MODEL, SEQUENCES, SOURCES

ADMIN = {"Authorization": f"Bearer {TOKEN}"}
OPEN = replace(SMALL, anonymous=EntryLimit(allowed=True, limit=3, per_minute=2))


@pytest.fixture(scope="module")
def manifest(tmp_path_factory):
    return make_stimuli(
        tmp_path_factory.mktemp("stimuli"), ["ground_truth", "a", "b"], ["s00", "s01", "s02"]
    )


@pytest.fixture
def study(manifest, tmp_path):
    return make_study(manifest, tmp_path)


def client_of(study: Study, **kwargs) -> TestClient:
    """A test client of the study's app that shows redirects (303) instead of following them."""
    return TestClient(create_app(study), follow_redirects=False, **kwargs)


def stored(study: Study) -> int:
    with study.store.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(responses)).scalar_one()


def honest(rating: int = 5):
    """Answers every question with `rating` (a, in pairwise mode) and every attention check as
    asked."""

    def decide(page: Page) -> dict:
        if page.notice:
            answer = asked_answer(page.notice)
            return {d: int(answer) if answer.isdigit() else answer for d in page.dimensions}
        return {d: rating if len(page.stimuli) == 1 else "a" for d in page.dimensions}

    return decide


def entered(study: Study, pid: str = "p1") -> tuple[TestClient, str]:
    """A client past consent, instructions and practice; returns it and its first item page."""
    client = client_of(study)
    client.get("/", params={"participant_id": pid})
    client.post("/consent")
    client.post("/instructions")
    page = client.get("/study").text
    sid = re.search(r'name="stimulus_a" value="([^"]+)"', page).group(1)
    dims = {d: 4 for d in dict.fromkeys(re.findall(r'type="radio" name="(\w+)"', page))}
    assert client.post("/practice", data={"stimulus_a": sid, **dims}).status_code == 303
    return client, client.get("/study").text


def first_item(page: str) -> tuple[str, dict]:
    sid = re.search(r'name="stimulus_a" value="([^"]+)"', page).group(1)
    dims = list(dict.fromkeys(re.findall(r'type="radio" name="(\w+)"', page)))
    return sid, {d: 3 for d in dims}


def ended(client: TestClient, position: int, sid: str) -> int:
    """Report clip `sid` of item `position` played to its end, as the page's script does."""
    return client.post(f"/ended/{position}", data={"stimulus": sid}).status_code


# ---------- the participant flow ----------


def test_a_full_session_is_stored_and_exported_as_clicked(manifest, tmp_path):
    study = make_study(manifest, tmp_path, OPEN)
    client = client_of(study)
    session = participate(client, "PROLIFIC_1", honest(6))
    assert session.code and len(session.answers) == 1 + 4 + 1  # practice, 4 clips, 1 check
    (participant,) = study.store.participants()
    assert participant.participant_id == "PROLIFIC_1" and participant.step == "complete"
    assert session.code == participant.completion_code
    exported_as_clicked(study, "PROLIFIC_1", session)
    assert stored(study) == 5 * len(CONDITIONS[participant.condition])
    # a generated id when the link carries none; the second participant gets the other condition
    other = participate(client_of(study), None, honest(2))
    second = study.store.participants()[1]
    assert second.participant_id.startswith("anon-") and second.condition != participant.condition
    exported_as_clicked(study, second.participant_id, other)


def test_a_reload_or_reopened_tab_resumes_and_an_id_cannot_be_taken_over(study):
    client, _ = entered(study)
    for _ in range(2):
        sid, answers = first_item(client.get("/study").text)
        position = int(re.search(r'action="/item/(\d+)"', client.get("/study").text).group(1))
        assert ended(client, position, sid) == 204
        assert (
            client.post(f"/item/{position}", data={"stimulus_a": sid, **answers}).status_code == 303
        )
    reopened = client_of(study, cookies={SESSION_COOKIE: client.cookies[SESSION_COOKIE]})
    assert (
        reopened.get("/", params={"participant_id": "p1"}, follow_redirects=False).headers[
            "location"
        ]
        == "/study"
    )
    assert 'action="/item/2"' in reopened.get("/study").text
    stranger = client_of(study)
    assert stranger.get("/", params={"participant_id": "p1"}).status_code == 409
    assert len(study.store.participants()) == 1


def test_restart_keeps_everything_and_a_foreign_schema_version_is_refused(manifest, tmp_path):
    study = make_study(manifest, tmp_path)
    client, page = entered(study)
    sid, answers = first_item(page)
    ended(client, 0, sid)
    assert client.post("/item/0", data={"stimulus_a": sid, **answers}).status_code == 303
    before = ratings_table(study.store)
    study.store.engine.dispose()
    again = make_study(manifest, tmp_path)  # the server restarted on the same database
    assert ratings_table(again.store).equals(before) and stored(again) == len(before)
    resumed = client_of(again, cookies={SESSION_COOKIE: client.cookies[SESSION_COOKIE]})
    assert 'action="/item/1"' in resumed.get("/study").text
    with again.store.engine.begin() as conn:
        conn.exec_driver_sql(f"UPDATE schema_version SET version = {SCHEMA_VERSION + 1}")
    with pytest.raises(DataError, match="schema version"):
        open_engine(f"sqlite:///{tmp_path / 'study.db'}")


# ---------- refusals: the right status and nothing stored ----------


def test_bad_submissions_are_refused_and_store_nothing(study):
    client, page = entered(study, "p1")
    sid, answers = first_item(page)
    dimension, last = next(iter(answers)), list(answers)[-1]
    other = next(s for s in study.stimuli if s != sid)
    # the clip was not reported played to its end: refused, whatever the answers
    assert client.post("/item/0", data={"stimulus_a": sid, **answers}).status_code == 409
    for form, position, status in [
        ({"stimulus": "no-such-clip"}, 0, 404),
        ({"stimulus": other}, 0, 422),  # a real clip, not this item's
        ({"stimulus": sid}, 1, 409),  # an item ahead
        ({"stimulus": sid}, 99, 404),
    ]:
        assert client.post(f"/ended/{position}", data=form).status_code == status, form
    assert client_of(study).post("/ended/0", data={"stimulus": sid}).status_code == 401
    assert ended(client, 0, sid) == 204 and ended(client, 0, sid) == 204  # idempotent
    bad = [
        ({"stimulus_a": sid, **answers, dimension: SCALE[1] + 1}, 0, 422),  # out of range
        ({"stimulus_a": sid, **answers, dimension: 0}, 0, 422),
        ({"stimulus_a": sid, **answers, last: 0}, 0, 422),  # only the last rating is bad
        ({"stimulus_a": sid, **answers, dimension: "4.5"}, 0, 422),
        ({"stimulus_a": sid}, 0, 422),  # no answers
        ({"stimulus_a": "no-such-clip", **answers}, 0, 404),  # unknown stimulus
        ({"stimulus_a": other, **answers}, 0, 422),  # a real clip, not this page's
        ({"stimulus_a": sid, **answers}, 1, 409),  # an item ahead
        ({"stimulus_a": sid, **answers}, 99, 404),  # no such item
    ]
    for form, position, status in bad:
        assert client.post(f"/item/{position}", data=form).status_code == status, form
    assert stored(study) == 0
    assert client.post("/item/0", data={"stimulus_a": sid, **answers}).status_code == 303
    n = stored(study)
    assert n == len(answers)
    # a replay is acknowledged and stores nothing; a changed replay is refused
    assert client.post("/item/0", data={"stimulus_a": sid, **answers}).status_code == 303
    changed = {**answers, dimension: 1 + answers[dimension] % SCALE[1]}
    assert client.post("/item/0", data={"stimulus_a": sid, **changed}).status_code == 409
    assert stored(study) == n and ratings_table(study.store)["rating"].eq(3).all()
    # the next item's clip is not played yet: its answers are refused
    next_sid, next_answers = first_item(client.get("/study").text)
    assert client.post("/item/1", data={"stimulus_a": next_sid, **next_answers}).status_code == 409
    assert stored(study) == n


def test_each_rating_is_its_own_transaction_and_a_crash_between_two_is_resumable(
    study, monkeypatch
):
    """The server dies after storing an item's first rating: nothing of the item is exported, the
    participant sees the item again, and its next answers (other ones) replace the stored one."""
    client, page = entered(study)
    sid, answers = first_item(page)
    assert len(answers) > 1
    ended(client, 0, sid)
    transactions = []
    original = study.store.rate

    def crash_at_second(*args, **kwargs):
        transactions.append(args[2]["dimension"])
        if len(transactions) == 2:
            raise RuntimeError("server killed")
        return original(*args, **kwargs)

    monkeypatch.setattr(study.store, "rate", crash_at_second)
    with pytest.raises(RuntimeError, match="killed"):
        client.post("/item/0", data={"stimulus_a": sid, **answers})
    assert stored(study) == 1  # the first rating's own transaction was committed
    assert ratings_table(study.store).empty  # an unfinished item is not an answer
    monkeypatch.setattr(study.store, "rate", original)
    assert 'action="/item/0"' in client.get("/study").text  # the item again
    again = {d: 6 for d in answers}
    assert client.post("/item/0", data={"stimulus_a": sid, **again}).status_code == 303
    table = ratings_table(study.store)
    assert list(table["dimension"]) == list(answers) and table["rating"].eq(6).all()
    assert stored(study) == len(answers) and 'action="/item/1"' in client.get("/study").text
    assert client.post("/item/0", data={"stimulus_a": sid, **again}).status_code == 303
    assert client.post("/item/0", data={"stimulus_a": sid, **answers}).status_code == 409
    assert stored(study) == len(answers)
    # one commit per rating
    sid, answers = first_item(client.get("/study").text)
    ended(client, 1, sid)
    commits = []
    event.listen(study.store.engine, "commit", commits.append)
    assert client.post("/item/1", data={"stimulus_a": sid, **answers}).status_code == 303
    assert len(commits) == len(answers)


def test_sessions_are_the_token_not_the_participant_id(study):
    _, alice_page = entered(study, "alice")
    bob, _ = entered(study, "bob")
    sid, answers = first_item(alice_page)
    forged = client_of(study, cookies={SESSION_COOKIE: "alice"})
    for client in (forged, client_of(study)):
        assert client.post("/item/0", data={"stimulus_a": sid, **answers}).status_code == 401
        assert client.get("/study").status_code == 401
        assert client.get(f"/media/{sid}").status_code == 401
    bob_block = next(p for p in study.store.participants() if p.participant_id == "bob").block
    if bob_block[0]["a"] != sid:  # alice's clip posted with bob's session: not bob's page
        assert bob.post("/item/0", data={"stimulus_a": sid, **answers}).status_code in (404, 422)
    assert stored(study) == 0


def test_steps_in_order_ids_validated_and_media_only_for_known_clips(study, manifest):
    client = client_of(study)
    assert client.get("/", params={"participant_id": "<script>"}).status_code == 422
    assert study.store.participants() == []
    client.get("/", params={"participant_id": "p1"})
    assert client.post("/instructions").status_code == 409  # consent first
    assert client.post("/item/0", data={}).status_code == 409
    assert client.post("/consent", follow_redirects=False).status_code == 303
    assert client.post("/consent", follow_redirects=False).status_code == 303  # idempotent
    sid = study.practice[study.store.participants()[0].condition]["a"]
    media = client.get(f"/media/{sid}")
    assert media.status_code == 200 and media.content == study.stimuli[sid].path.read_bytes()
    assert client.get("/media/..%2Fmanifest.csv").status_code == 404
    assert client.get("/media/nothing").status_code == 404


def test_experimenter_pages_need_the_token(study, manifest, tmp_path):
    participate(client_of(study), "p1", honest())
    client = client_of(study)
    for url in ("/admin/progress", "/admin/export.csv"):
        assert client.get(url).status_code == 403
        assert client.get(url, headers={"Authorization": "Bearer wrong"}).status_code == 403
        assert client.get(url, headers=ADMIN).status_code == 200
        # never in the URL, nor without its scheme
        assert client.get(url, params={"token": TOKEN}).status_code == 403
        assert client.get(url, headers={"Authorization": TOKEN}).status_code == 403
    export = client.get("/admin/export.csv", headers=ADMIN).text
    path = tmp_path / "ratings.csv"
    path.write_text(export)
    read = read_ratings(path, sources=["ground_truth", "a", "b"], sequences=["s00", "s01", "s02"])
    assert not read.invalid and len(read.frame) == len(ratings_table(study.store))
    progress = client.get("/admin/progress", headers=ADMIN).text
    assert "muted-a-s00" in progress and "failed_checks" in progress
    off = make_study(manifest, tmp_path / "off", token=None)
    assert client_of(off).get("/admin/progress").status_code == 503


def test_configured_text_is_escaped(manifest, tmp_path):
    design = replace(SMALL, title="<b>study</b>", consent="<script>alert(1)</script>")
    client = TestClient(create_app(make_study(manifest, tmp_path, design)))
    html = client.get("/?participant_id=p1", follow_redirects=True).text
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b&gt;study&lt;/b&gt;" in html


# ---------- entry, sessions and the hardening ----------


def entry(study: Study, pid: str | None, **params) -> httpx.Response:
    """A link opened by a fresh browser (no cookie): the entry's reply."""
    query = {"participant_id": pid, **params} if pid else params
    return client_of(study).get("/", params=query)


def numbers(study: Study) -> list:
    return sorted(p.number for p in study.store.participants() if p.number is not None)


def test_a_lost_entry_reply_locks_nobody_out_and_burns_no_slot(study):
    """The reply of an entry is lost (or a prefetcher opened the link): the same id entering again
    gets a new session, the lost one ends, and no slot was taken before consent."""
    lost = entry(study, "p1")
    assert lost.status_code == 303
    for pid in ("prefetched-1", "prefetched-2"):
        assert entry(study, pid).status_code == 303
    client = client_of(study)
    assert client.get("/", params={"participant_id": "p1"}).status_code == 303
    assert client.cookies[SESSION_COOKIE] != lost.cookies[SESSION_COOKIE]
    stale = client_of(study, cookies={SESSION_COOKIE: lost.cookies[SESSION_COOKIE]})
    assert stale.get("/study").status_code == 401
    assert numbers(study) == []  # nobody has a slot before consent
    assert client.post("/consent").status_code == 303
    other = client_of(study)
    other.get("/", params={"participant_id": "p2"})
    other.post("/consent")
    by_id = {p.participant_id: p for p in study.store.participants()}
    assert (by_id["p1"].number, by_id["p2"].number) == (0, 1)
    assert by_id["p1"].condition != by_id["p2"].condition
    assert by_id["prefetched-1"].number is None and len(by_id) == 4


def test_an_id_with_ratings_is_refused_with_a_page_until_the_experimenter_resets_it(study):
    client, page = entered(study, "p1")
    sid, answers = first_item(page)
    ended(client, 0, sid)
    assert client.post("/item/0", data={"stimulus_a": sid, **answers}).status_code == 303
    refused = entry(study, "p1")
    assert refused.status_code == 409 and refused.headers["content-type"].startswith("text/html")
    assert "another browser" in refused.text and "detail" not in refused.text
    api = client_of(study).get(
        "/", params={"participant_id": "p1"}, headers={"Accept": "application/json"}
    )
    assert api.status_code == 409 and "session already" in api.json()["detail"]
    reset = "/admin/participants/p1/reset"
    assert client_of(study).post(reset).status_code == 403
    assert client_of(study).post(reset, params={"token": TOKEN}).status_code == 403
    assert client_of(study).post("/admin/participants/nobody/reset", headers=ADMIN).status_code == (
        404
    )
    assert client_of(study).post(reset, headers=ADMIN).status_code == 200
    assert client.get("/study").status_code == 401  # the old session ended
    again = client_of(study)
    assert again.get("/", params={"participant_id": "p1"}).status_code == 303
    assert 'action="/item/1"' in again.get("/study").text  # where it stopped, answers kept
    assert stored(study) == len(answers) and len(study.store.participants()) == 1
    assert entry(study, "p1").status_code == 409  # reset once, for one new entry


def test_signed_links(manifest, tmp_path):
    secret = "the-study-secret"
    study = Study(
        read_manifest(manifest),
        replace(SMALL, unsigned=EntryLimit()),  # signing: every link signed, no unsigned ids
        Store(open_engine(f"sqlite:///{tmp_path / 'study.db'}")),
        TOKEN,
        link_secret=secret,
    )
    good = link_signature(secret, "p1")
    assert entry(study, "p1", sig=good).status_code == 303
    for sig in ({}, {"sig": ""}, {"sig": good[:-1] + "0"}, {"sig": link_signature(secret, "p2")}):
        refused = entry(study, "p1", **sig)
        assert refused.status_code == 403 and "link is not valid" in refused.text, sig
    assert entry(study, "p2", sig=good).status_code == 403
    assert [p.participant_id for p in study.store.participants()] == ["p1"]


def test_anonymous_entries_are_off_by_default_and_capped_and_rate_limited(
    study, manifest, tmp_path, monkeypatch
):
    refused = entry(study, None)
    assert refused.status_code == 400 and "link you were given" in refused.text
    assert study.store.participants() == []
    capped = make_study(manifest, tmp_path / "open", OPEN)  # 3 in all, 2 a minute
    clock = [1000.0]
    monkeypatch.setattr("gesturebench.study.server.app.time.monotonic", lambda: clock[0])
    assert [entry(capped, None).status_code for _ in range(3)] == [303, 303, 429]
    clock[0] += 61
    assert [entry(capped, None).status_code for _ in range(2)] == [303, 403]
    assert "all the participants it needs" in entry(capped, None).text
    assert len(capped.store.participants()) == 3
    assert entry(capped, "named").status_code == 303  # ids from links are not capped


def test_the_anonymous_cap_counts_anonymous_entries_only(manifest, tmp_path):
    """Unsigned ids shaped like the anonymous ones (`anon-NNN`) take none of the anonymous
    places: the cap counts the stored entry kind, not the id's text."""
    study = make_study(manifest, tmp_path, OPEN)  # 3 anonymous in all
    assert [entry(study, f"anon-{n:03d}").status_code for n in range(5)] == [303] * 5
    assert [entry(study, None).status_code for _ in range(2)] == [303, 303]
    assert [study.store.count_entries(k) for k in ("unsigned", "anonymous")] == [5, 2]


def test_unsigned_ids_are_off_by_default_and_capped_and_rate_limited_when_allowed(
    manifest, tmp_path, monkeypatch
):
    """By default an id from a link gets in only signed or listed in `task.design.ids_file`; with
    `task.design.unsigned.allowed` new unsigned ids are capped and rate-limited like anonymous
    entries (a re-entry of a known id is neither)."""
    ids = tmp_path / "ids.txt"
    ids.write_text("# the study's participants\nlisted-1\n\nlisted-2  # late\n")
    listed = make_study(manifest, tmp_path / "listed", StudyDesign(ids_file=str(ids)))
    assert entry(listed, "listed-2").status_code == 303
    refused = entry(listed, "stranger")
    assert refused.status_code == 403 and "link is not valid" in refused.text
    assert [p.participant_id for p in listed.store.participants()] == ["listed-2"]
    assert entry(make_study(manifest, tmp_path / "default", StudyDesign()), "p1").status_code == 403
    ids.write_text("listed-1\n<bad>\n")
    with pytest.raises(ConfigError, match="line 2"):
        make_study(manifest, tmp_path / "bad", StudyDesign(ids_file=str(ids)))
    with pytest.raises(ConfigError, match="signed"):
        Study(read_manifest(manifest), SMALL, listed.store, TOKEN, link_secret="s")
    rule = EntryLimit(allowed=True, limit=3, per_minute=2)
    capped = make_study(manifest, tmp_path / "capped", StudyDesign(unsigned=rule))
    clock = [1000.0]
    monkeypatch.setattr("gesturebench.study.server.app.time.monotonic", lambda: clock[0])
    assert [entry(capped, f"u{n}").status_code for n in range(3)] == [303, 303, 429]
    assert entry(capped, "u0").status_code == 303  # a known id re-enters: no new place
    clock[0] += 61
    assert [entry(capped, f"u{n}").status_code for n in range(2, 5)] == [303, 403, 403]
    assert "all the participants it needs" in entry(capped, "u9").text
    assert sorted(p.participant_id for p in capped.store.participants()) == ["u0", "u1", "u2"]
    assert entry(capped, None).status_code == 400  # anonymous entries still off


def test_a_version_3_database_is_migrated_and_its_ratings_kept(manifest, tmp_path):
    """A database written before the entry kind was stored opens: its rows are marked anonymous
    by the shape the server gave anonymous ids, the others unsigned; nothing else changes."""
    study = make_study(manifest, tmp_path, OPEN)
    client, page = entered(study, "anon-001")
    sid, answers = first_item(page)
    ended(client, 0, sid)
    assert client.post("/item/0", data={"stimulus_a": sid, **answers}).status_code == 303
    assert entry(study, None).status_code == 303
    before = ratings_table(study.store)
    with study.store.engine.begin() as conn:  # back to version 3's tables
        conn.exec_driver_sql("ALTER TABLE participants DROP COLUMN entry")
        conn.exec_driver_sql("UPDATE schema_version SET version = 3")
    study.store.engine.dispose()
    again = make_study(manifest, tmp_path, OPEN)
    assert ratings_table(again.store).equals(before)
    assert again.store.count_entries("anonymous") == 1
    assert again.store.count_entries("unsigned") == 1
    with again.store.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT version FROM schema_version").scalars().all() == [
            SCHEMA_VERSION
        ]


def test_a_session_fetches_only_its_own_blocks_clips(study):
    alice, _ = entered(study, "alice")
    bob, _ = entered(study, "bob")
    people = {p.participant_id: p for p in study.store.participants()}
    assert people["alice"].condition != people["bob"].condition
    for client, own, other in ((alice, "alice", "bob"), (bob, "bob", "alice")):
        mine = study.clips(people[own])
        block = {item["a"] for item in people[own].block}
        assert len(block) == 4 and mine == block | {study.practice[people[own].condition]["a"]}
        for sid in mine:
            assert client.get(f"/media/{sid}").status_code == 200
        for sid in set(study.stimuli) - mine:
            assert client.get(f"/media/{sid}").status_code == 403, sid
        assert study.clips(people[other]) - mine  # the other condition's clips: refused above
    early = client_of(study)
    early.get("/", params={"participant_id": "carol"})  # not consented: no clip at all
    assert early.get(f"/media/{next(iter(study.stimuli))}").status_code == 403


def test_a_rating_of_5000_digits_is_refused_as_unreadable(study):
    client, page = entered(study)
    sid, answers = first_item(page)
    ended(client, 0, sid)
    dimension = next(iter(answers))
    for value in ("4" * 5000, "٣", " 3", "+3", "03"):
        response = client.post("/item/0", data={"stimulus_a": sid, **answers, dimension: value})
        assert response.status_code == 422, value
        assert "could not be read" in response.text and len(response.text) < 2000
    assert stored(study) == 0


def test_every_response_carries_the_security_headers(study):
    client, page = entered(study)
    responses_ = [
        client.get("/study"),
        client.get("/static/study.js"),
        client.get("/healthz"),
        client.get("/no-such-page"),
        client.post("/item/0", data={}),
    ]
    for response in responses_:
        headers = response.headers
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        assert "script-src 'self';" in headers["content-security-policy"]  # no inline script
        assert headers["x-frame-options"] == "DENY"
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "same-origin"
    assert "<script>" not in page and 'src="/static/study.js"' in page
    assert "<style>" not in page


def test_a_post_from_another_origin_is_refused(study):
    client = client_of(study)
    client.get("/", params={"participant_id": "p1"})
    for headers in (
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Referer": "https://evil.example/study"},
        {"Origin": "http://testserver.evil.example"},
    ):
        refused = client.post("/consent", headers=headers)
        assert refused.status_code == 403 and "text/html" in refused.headers["content-type"]
    assert study.store.participants()[0].step == "consent"
    for headers in ({"Origin": "http://testserver"}, {"Referer": "http://testserver/study"}, {}):
        assert client.post("/consent", headers=headers).status_code == 303
    assert study.store.participants()[0].step == "instructions"


def test_participants_meet_pages_never_json(study):
    """Each refusal a participant can meet is a page of the study (title, words, a way back)."""
    client, page = entered(study)
    sid, answers = first_item(page)
    pages = {
        "no session": client_of(study).get("/study"),
        "not played": client.post("/item/0", data={"stimulus_a": sid, **answers}),
        "bad answer": client.post("/item/0", data={"stimulus_a": sid}),
        "no such item": client.post("/item/abc", data={}),
        "no such page": client.get("/nothing"),
        "bad id": entry(study, "<script>"),
    }
    for name, response in pages.items():
        assert response.headers["content-type"].startswith("text/html"), name
        assert "<h1>Gesture study</h1>" in response.text and "{" not in response.text, name
    assert "watch every clip" in pages["not played"].text
    assert 'href="/study"' in pages["bad answer"].text
    api = client.post("/item/abc", headers={"Accept": "application/json"})
    assert api.status_code == 422 and isinstance(api.json()["detail"], list)


@pytest.mark.slow
def test_kill_9_while_participants_arrive_locks_nobody_out(manifest, tmp_path):
    """Participants keep arriving (entry, then consent) while the server is killed with SIGKILL;
    after a restart every one of them enters (with the cookie it got, or again without one),
    consents, and the slots taken are exactly 0..n-1."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = serve_process(tmp_path, manifest, port)
    cookies: dict[str, str | None] = {}

    def arrive(pid: str) -> None:
        cookies[pid] = None
        try:
            with httpx.Client(base_url=url, timeout=5) as client:
                client.get("/", params={"participant_id": pid})
                cookies[pid] = client.cookies.get(SESSION_COOKIE)
                client.post("/consent")
        except httpx.HTTPError:
            pass  # the reply was lost

    try:
        kill_while_arriving(url, server, arrive)
        server = serve_process(tmp_path, manifest, port)
        wait_ready(url, time.monotonic() + 120, server)
        for pid, cookie in cookies.items():
            with httpx.Client(base_url=url, timeout=30) as client:
                if cookie:
                    client.cookies.set(SESSION_COOKIE, cookie)
                assert client.get("/", params={"participant_id": pid}).status_code == 303, pid
                assert client.post("/consent", follow_redirects=True).status_code == 200, pid
                assert "Start the practice clip" in client.get("/study").text, pid
    finally:
        server.kill()
        server.wait(10)
    store = Store(open_engine(f"sqlite:///{tmp_path / 'study.db'}"))
    assert numbers(Study(read_manifest(manifest), SMALL, store, None)) == list(range(40))


# ---------- blocks ----------


def test_blocks_are_balanced_and_deterministic_from_the_seed(manifest, tmp_path):
    design = StudyDesign(block_size=3, attention=AttentionChecks(after=[1, 3]))
    study = make_study(manifest, tmp_path, design)
    blocks = [study.assign(n) for n in range(12)]
    assert [c for c, _ in blocks] == ["muted", "audio"] * 6
    for condition in CONDITIONS:
        items = [i for c, b in blocks if c == condition for i in b if i["kind"] == "rating"]
        counts = Counter(i["a"] for i in items)
        assert len(counts) == 9 and set(counts.values()) == {2}  # every clip twice
        for c, b in blocks:
            if c == condition:
                rated = [study.stimuli[i["a"]] for i in b if i["kind"] == "rating"]
                assert sorted(s.source for s in rated) == ["a", "b", "ground_truth"]
                assert [i["kind"] for i in b] == [
                    "rating",
                    "attention",
                    "rating",
                    "rating",
                    "attention",
                ]
                assert all(i["a"] in {s.stimulus_id for s in rated} for i in b)
    same = make_study(manifest, tmp_path / "again", design)
    assert [same.assign(n) for n in range(12)] == blocks
    other = make_study(manifest, tmp_path / "other", StudyDesign(block_size=3, seed=1))
    assert [other.assign(n)[1] for n in range(12)] != [b for _, b in blocks]


def test_manifest_problems_are_one_line_errors(manifest, tmp_path):
    text = manifest.read_text().splitlines()
    broken = manifest.parent / "broken.csv"
    broken.write_text("\n".join([text[0], text[1][:-4] + "0000"]) + "\n")
    with pytest.raises(DataError, match="line 2: SHA-256"):
        read_manifest(broken)
    broken.write_text("stimulus_id,source\n")
    with pytest.raises(DataError, match="missing column"):
        read_manifest(broken)


# ---------- pairwise mode, the export task ----------


def test_pairwise_session_exported_as_clicked(manifest, tmp_path):
    design = replace(SMALL, mode="pairwise", block_size=3, attention=AttentionChecks(after=[1]))
    study = make_study(manifest, tmp_path, design)
    session = participate(client_of(study), "p1", honest())
    (participant,) = study.store.participants()
    table = pairwise_table(study.store)
    expected = []
    for action, clips, answers in session.answers[1:]:
        a, b = (study.stimuli[s] for s in clips)
        assert a.sequence_id == b.sequence_id and a.source != b.source
        if participant.block[int(action.rsplit("/", 1)[1])]["kind"] == "attention":
            expected.append(("attention", a.source, b.source, True))
        else:
            expected += [(d, a.source, b.source, None) for d in answers]
    got = [
        (r.dimension, r.source_a, r.source_b, None if pd.isna(r.passed) else bool(r.passed))
        for r in table.itertuples()
    ]
    assert got == expected and (table.loc[table["dimension"] != "attention", "winner"] == "a").all()
    path = tmp_path / "pairwise.csv"
    path.write_text(pairwise_csv(table))
    assert read_pairwise(path).shape == table.shape


def test_export_and_server_tasks_from_the_config(config, manifest, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = config(
        "task=study_server",
        f"task.manifest={manifest}",
        "task.design.block_size=4",
        "task.design.anonymous.limit=7",
    )
    monkeypatch.setenv("GESTUREBENCH_STUDY_TOKEN", TOKEN)
    monkeypatch.setenv("GESTUREBENCH_STUDY_LINK_SECRET", "secret")
    study = app_of(cfg)
    assert study.admin_token == TOKEN and study.design.seed == cfg.seed
    assert study.design.anonymous == EntryLimit(limit=7) and study.link_secret == "secret"
    monkeypatch.delenv("GESTUREBENCH_STUDY_LINK_SECRET")
    study = app_of(config(*UNSIGNED_LINKS, f"task.manifest={manifest}", "task.design.block_size=4"))
    assert (tmp_path / "outputs" / "study_server" / "study" / "study.db").is_file()
    participate(client_of(study), "p1", honest())
    participate(client_of(study), "p2", honest(3))
    cfg = config("task=study_export", f"task.manifest={manifest}")
    summary = build(cfg.task)(cfg, Job.of_hydra())
    assert set(summary["files"]) == {"ratings", "progress_participants", "progress_stimuli"}
    assert (tmp_path / "ratings.csv").read_text() == ratings_csv(ratings_table(study.store))
    people = pd.read_csv(tmp_path / "progress_participants.csv")
    assert people["complete"].all() and (people["failed_checks"] == 0).all()
    stimuli = pd.read_csv(tmp_path / "progress_stimuli.csv")
    assert stimuli["participants"].sum() == 8 and len(stimuli) == len(study.stimuli)


def test_the_database_is_study_server_db_url_for_both_tasks(
    config, manifest, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    cfg = config(*UNSIGNED_LINKS, f"task.manifest={manifest}", f"study_server.db_url={url}")
    study = app_of(cfg)
    participate(client_of(study), "p1", honest())
    assert (tmp_path / "elsewhere.db").is_file() and not (tmp_path / "outputs").exists()
    cfg = config("task=study_export", f"study_server.db_url={url}")
    build(cfg.task)(cfg, Job.of_hydra())
    assert (tmp_path / "ratings.csv").read_text() == ratings_csv(ratings_table(study.store))
    for typo in ("task.db_url=x", "study_server.db_ur=x"):  # the old key, a typo: compose errors
        with pytest.raises(ConfigCompositionException, match="db_ur"):
            config("task=study_server", f"task.manifest={manifest}", typo)


# ---------- PostgreSQL ----------


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on a Unix socket in a temporary folder (initdb + pg_ctl,
    as the postgres user when run as root): its SQLAlchemy URL. Skipped where the server's
    binaries are absent (a failure under CI: `tests.support.requires`)."""
    bindir = require_postgres()
    folder = Path(tempfile.mkdtemp(prefix="gb-pg-"))
    folder.chmod(0o755)
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root
        shutil.chown(folder, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    data = folder / "data"

    def run(*args: str) -> None:
        subprocess.run([*as_user, *args], check=True, capture_output=True, timeout=60)

    run(str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust")
    options = f"-k {folder} -c listen_addresses='' -c fsync=off"
    pg_ctl = str(bindir / "pg_ctl")
    run(pg_ctl, "-D", str(data), "-o", options, "-l", str(folder / "log"), "-w", "start")
    try:
        yield f"postgresql+psycopg://postgres@/postgres?host={folder}"
    finally:
        run(pg_ctl, "-D", str(data), "-m", "immediate", "stop")
        shutil.rmtree(folder, ignore_errors=True)


def test_the_study_runs_on_postgresql(postgres_url, manifest, tmp_path):
    """The same app on a PostgreSQL database: whole sessions exported as clicked, a replay and
    refusals storing nothing, concurrent double submissions stored once, a restart keeping all."""
    store = Store(open_engine(postgres_url))
    study = Study(read_manifest(manifest), SMALL, store, TOKEN)
    assert store.engine.dialect.name == "postgresql"
    session = participate(client_of(study), "pg-1", honest(6))
    exported_as_clicked(study, "pg-1", session)
    n = stored(study)
    client, page = entered(study, "pg-2")
    sid, answers = first_item(page)
    assert client.post("/item/0", data={"stimulus_a": sid, **answers}).status_code == 409
    assert ended(client, 0, sid) == 204
    cookie = {SESSION_COOKIE: client.cookies[SESSION_COOKIE]}
    tabs = [client_of(study, cookies=cookie) for _ in range(4)]
    with ThreadPoolExecutor(4) as pool:
        codes = list(
            pool.map(
                lambda tab: tab.post("/item/0", data={"stimulus_a": sid, **answers}).status_code,
                tabs,
            )
        )
    assert codes == [303] * 4 and stored(study) == n + len(answers)
    store.engine.dispose()
    again = Store(open_engine(postgres_url))
    assert [p.position for p in again.participants()] == [5, 1]
    assert len(ratings_table(again)) == len(ratings_table(store))


# ---------- round trip: synthetic participants → export → analysis ----------


@pytest.mark.slow
def test_synthetic_participants_through_the_server_recover_the_planted_model(
    metrics_table,
    tmp_path,
):
    """Participants answer as the synthetic study's rating model does (latent clip rating + rater
    bias + noise; two inattentive ones answer at random and fail the checks); the exported file,
    analysed unchanged, finds each dimension's planted metrics, as tests/test_study.py does on the
    generated file."""
    manifest = make_stimuli(tmp_path / "stimuli", SOURCES, SEQUENCES, video=False)
    design = replace(SMALL, block_size=25, attention=AttentionChecks(after=[8, 16, 24]))
    study = make_study(manifest, tmp_path, design)
    model = SyntheticStudy(model=MODEL, seed=5)
    rng = np.random.default_rng(5)
    generated = pd.Series(
        metrics_table.index.get_level_values("source") != "ground_truth", index=metrics_table.index
    )
    weights, _ = usable_terms(metrics_table, generated, model)
    latent = latent_ratings(metrics_table, generated, weights, model, rng)

    def rater(inattentive: bool):
        bias = rng.normal(0.0, model.rater_bias)

        def decide(page: Page) -> dict:
            if inattentive:
                return {d: int(rng.integers(1, 8)) % 7 + 1 for d in page.dimensions}
            if page.notice:
                return {d: int(asked_answer(page.notice)) for d in page.dimensions}
            clip = study.stimuli[page.stimuli[0]]
            mean = latent.loc[(clip.source, clip.sequence_id)]
            return {
                d: int(np.clip(np.rint(mean[d] + bias + rng.normal(0, model.rating_noise)), *SCALE))
                for d in page.dimensions
            }

        return decide

    with client_of(study) as client:  # one app and event loop for all: a new one costs ~1 s
        for i in range(60):
            client.cookies.clear()  # a new participant: no session cookie
            participate(client, f"r{i:03d}", rater(inattentive=i < 2))
    path = tmp_path / "ratings.csv"
    path.write_text(ratings_csv(ratings_table(study.store)))
    read = read_ratings(path, sources=SOURCES, sequences=SEQUENCES)
    assert not read.invalid
    result = analyze(require_valid(read, False), metrics_table, AnalysisOptions(**FAST))
    qc = result.tables["qc_participants"]
    assert set(qc.loc[qc["excluded"], "participant_id"]) <= {"r000", "r001"}
    assert qc["excluded"].sum() >= 1
    fig3 = result.tables["figure3_metric_correlations"]
    for d, spec in MODEL.items():
        rows = fig3[fig3["dimension"] == d].assign(abs_rho=lambda t: t["rho"].abs())
        top = rows.sort_values("abs_rho").tail(len(spec["weights"])).set_index("metric")
        assert set(top.index) == set(spec["weights"]), d
        for m, w in spec["weights"].items():
            assert np.sign(top.at[m, "rho"]) == np.sign(w) and top.at[m, "p_holm"] < 0.01, (d, m)
    table3 = result.tables["table3_composites"].set_index("dimension")
    assert all(table3.at[d, "best_metric"] in spec["weights"] for d, spec in MODEL.items())


# ---------- the "done when": render → study_server → export → analyze, for real ----------

#: How good each rendered source looks to the simulated participants (their mean rating).
QUALITY = {"ground_truth": 6, "delayed": 5, "jitter": 4, "rotation_noise": 3, "random_clip": 2}


def rater(client: httpx.Client, stimuli: dict, rng: np.random.Generator):
    """A participant fetching each clip of a page (checked: video/mp4, the file's bytes) and
    rating it by its source's `QUALITY` ± 1; attention checks as asked."""

    def decide(page: Page) -> dict:
        for sid in page.stimuli:
            media = client.get(f"/media/{sid}")
            assert media.headers["content-type"] == "video/mp4"
            assert media.content == stimuli[sid].path.read_bytes()
        if page.notice:
            return {d: int(asked_answer(page.notice)) for d in page.dimensions}
        mean = QUALITY[stimuli[page.stimuli[0]].source]
        return {d: int(np.clip(mean + rng.integers(-1, 2), *SCALE)) for d in page.dimensions}

    return decide


@pytest.mark.slow
def test_render_then_study_server_serves_a_study_that_export_and_analyze_read(
    rendered_stimuli, tmp_path, in_process
):
    """`task=render`'s real output served by `python launch.py task=study_server` (a process on
    loopback): 16 participants take the whole study over HTTP, fetching each clip (video/mp4, the
    rendered file byte for byte) and reporting it played to its end; then `task=study_export`
    writes the ratings file and `task=analyze` reads it unchanged and fits the composite metrics
    (both as `launch.py` runs them, in the test process)."""
    stimuli = read_manifest(rendered_stimuli)
    database = f"sqlite:///{tmp_path / 'study.db'}"
    port = free_port()
    cmd, env = command(
        "task=study_server",
        f"task.manifest={rendered_stimuli}",
        f"task.port={port}",
        f"study_server.db_url={database}",
        "task.design.block_size=10",
        "task.design.attention.after=[5]",
        *UNSIGNED_LINKS[1:],
        "logger=none",
        f"hydra.run.dir={tmp_path / 'server'}",
        env={"GESTUREBENCH_STUDY_TOKEN": TOKEN},
    )
    url = f"http://127.0.0.1:{port}"
    rng = np.random.default_rng(0)
    with open(tmp_path / "server.log", "w") as log:
        server = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=log)
        try:
            wait_ready(url, time.monotonic() + 120, server)
            for n in range(16):
                with httpx.Client(base_url=url, timeout=60) as client:
                    participant = rater(client, stimuli, rng)
                    assert participate(client, f"rater{n:02d}", participant).code
            served = httpx.get(f"{url}/admin/export.csv", headers=ADMIN).text
        finally:
            server.terminate()
            server.wait(30)
    in_process(
        "task=study_export",
        f"study_server.db_url={database}",
        f"task.manifest={rendered_stimuli}",
        "logger=none",
        f"hydra.run.dir={tmp_path / 'export'}",
        encoders=False,
    )
    ratings = tmp_path / "export" / "ratings.csv"
    assert ratings.read_text() == served
    table = pd.read_csv(ratings)
    rated = table[table["dimension"] != "attention"]
    assert len(rated) == 8 * 10 * 3 + 8 * 10 * 2  # 8 participants per condition, 10 clips each
    counts = pd.read_csv(tmp_path / "export" / "progress_stimuli.csv")
    assert len(counts) == len(stimuli) and (counts["participants"] == 4).all()  # balanced
    in_process(
        "task=analyze",
        "study=csv",
        f"study.path={ratings}",
        *RENDERED_WINDOWS,
        "study.windows.splits=[test,val,train]",
        "metrics=fast",
        "study.analysis.bootstrap=50",
        "study.analysis.permutations=9",
        "logger=none",
        f"hydra.run.dir={tmp_path / 'analyze'}",
        encoders=False,
    )
    out = tmp_path / "analyze"
    windows = pd.read_csv(out / "windows.csv", dtype={"sequence_id": str})
    assert set(windows["sequence_id"]) == {s.sequence_id for s in stimuli.values()}
    qc = pd.read_csv(out / "qc_participants.csv")
    assert len(qc) == 16 and not qc["excluded"].any()
    composites = json.loads((out / "composites.json").read_text())
    assert composites


def test_the_restart_entry_refuses_a_folder_without_config_in_one_line(manifest, tmp_path, capfd):
    """A folder no launch wrote, or an override the saved config does not have: one line, exit 2."""
    assert restart_main([str(tmp_path)]) == 2
    assert (
        capfd.readouterr()
        .err.strip()
        .endswith("start the study once with `python launch.py task=study_server`")
    )
    save_config(tmp_path, ServerOptions(manifest=str(manifest)), "sqlite:///x.db")
    assert restart_main([str(tmp_path), "task.portt=1"]) == 2
    err = capfd.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "portt" in err, err


def test_the_server_starts_without_torch_lightning_or_scikit_learn(tmp_path):
    """The restart entry and the server task import none of the heavy packages, so a restarted
    server answers within seconds (a fresh interpreter shows what an import pulls in)."""
    probe = (
        "import sys, gesturebench.study.server.__main__, gesturebench.tasks.study_server;"
        "print([m for m in ('torch', 'pytorch_lightning', 'sklearn') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert out.stdout.strip() == "[]", out.stderr[-2000:]


#: `task=study_server` letting in the unsigned ids of the tests' links (docs/study_server.md).
UNSIGNED_LINKS = (
    "task=study_server",
    "task.design.unsigned.allowed=true",
    "task.design.unsigned.per_minute=1000",
)


def app_of(cfg):
    """The study `task=study_server` of `cfg` serves."""
    task = build(cfg.task)
    return task.study_app(database_url(cfg.study_server.db_url, cfg.paths.root, task.study))
