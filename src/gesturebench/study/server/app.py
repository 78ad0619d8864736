"""The study's FastAPI app: the participant flow (consent → instructions → practice → block →
completion code) on one page address, `/study`, that always shows where the participant stands, so
a reload or a reopened tab resumes; the media; the experimenter's token-protected progress and
export.

A participant is known by an unguessable session token in an HTTP-only, same-site cookie, never by
its participant id. Every submission is validated against the participant's own block (the clip of
that page, the condition's dimensions, the answer range) before anything is stored: a bad one gets a
4xx and changes nothing. Answering an item already answered with the same answers is acknowledged
as if it were new (a double click, a resent form); with other answers it is refused.

The video-end rule holds on the server too: the page posts `/ended/<position>` when a clip of a
block item has played to its end (then unlocks the questions), and the item's answers are refused
(409, nothing stored) until every clip of the item was reported so.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, PlainTextResponse, RedirectResponse
from starlette.concurrency import run_in_threadpool

from gesturebench.errors import ConfigError
from gesturebench.study.pairwise import pairwise_csv
from gesturebench.study.ratings import ratings_csv
from gesturebench.study.schema import SCALE
from gesturebench.study.server.design import CHOICES, StudyDesign, block, conditions, layout
from gesturebench.study.server.export import pairwise_table, progress_tables, ratings_table
from gesturebench.study.server.manifest import Stimulus
from gesturebench.study.server.pages import render
from gesturebench.study.server.store import STEPS, Participant, ParticipantExists, Store

SESSION_COOKIE = "gb_session"
#: What a participant id from a URL may look like (a recruitment platform's ids do).
PARTICIPANT_ID = re.compile(r"[A-Za-z0-9_.@-]{1,200}")
CHOICE_LABELS = {"a": "Clip A", "b": "Clip B", "tie": "No difference"}


def see_other(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


class Study:
    """The app's state: stimuli, design, the store, each condition's item layout and practice
    item."""

    def __init__(
        self, stimuli: Mapping[str, Stimulus], design: StudyDesign, store: Store, token: str | None
    ):
        self.stimuli = dict(stimuli)
        self.design = design
        self.store = store
        self.admin_token = token
        self.conditions = conditions(self.stimuli, design)
        self.layouts = {c: layout(self.stimuli, design, c) for c in self.conditions}
        self.practice = {}
        for c in self.conditions:
            chosen = design.practice.get(c)
            if chosen is not None and design.mode != "rating":
                raise ConfigError("task.design.practice chooses a clip in rating mode only")
            if chosen is not None and (chosen not in stimuli or stimuli[chosen].condition != c):
                raise ConfigError(f"task.design.practice: {chosen!r} is not a {c} stimulus")
            self.practice[c] = (
                {"kind": "rating", "a": chosen}
                if chosen
                else dict(self.layouts[c][0], kind="practice")
            )

    def assign(self, number: int) -> tuple[str, list[dict]]:
        condition = self.conditions[number % len(self.conditions)]
        index = number // len(self.conditions)
        return condition, block(self.layouts[condition], self.design, condition, index)

    def participant(self, request: Request) -> Participant:
        token = request.cookies.get(SESSION_COOKIE, "")
        found = self.store.by_token(token) if token else None
        if found is None:
            raise HTTPException(401, "no study session: open the study from its link")
        return found

    def require_admin(self, request: Request) -> None:
        if not self.admin_token:
            raise HTTPException(503, "the experimenter pages are off: no admin token was set")
        given = request.query_params.get("token") or request.headers.get(
            "authorization", ""
        ).removeprefix("Bearer ")
        if not secrets.compare_digest(given.encode(), self.admin_token.encode()):
            raise HTTPException(403, "wrong or missing admin token")

    def answer_rows(
        self, participant: Participant, item: dict, form: Mapping[str, Any]
    ) -> list[dict]:
        """The responses' rows of the answers `form` to `item`, validated (`HTTPException` 404 for
        an unknown stimulus, 422 for anything else wrong)."""
        for side in ("a", "b") if "b" in item else ("a",):
            given = str(form.get(f"stimulus_{side}", ""))
            if given not in self.stimuli:
                raise HTTPException(404, f"unknown stimulus {given!r}")
            if given != item[side]:
                raise HTTPException(422, f"stimulus {given!r} is not the clip of this page")
        pairwise = "b" in item
        answers: dict[str, int | str] = {}
        for dimension in self.design.dimensions(participant.condition):
            value = str(form.get(dimension, ""))
            if pairwise:
                if value not in CHOICES:
                    raise HTTPException(422, f"{dimension}: answer a, b or tie, got {value!r}")
                answers[dimension] = value
            else:
                if not value.isdecimal() or not SCALE[0] <= int(value) <= SCALE[1]:
                    raise HTTPException(
                        422, f"{dimension}: rating must be {SCALE[0]}–{SCALE[1]}, got {value!r}"
                    )
                answers[dimension] = int(value)
        a = self.stimuli[item["a"]]
        b = self.stimuli[item["b"]] if pairwise else None
        passed = (
            all(v == item["answer"] for v in answers.values())
            if item["kind"] == "attention"
            else None
        )
        return [
            {
                "kind": item["kind"],
                "dimension": d,
                "stimulus_a": a.stimulus_id,
                "stimulus_b": b.stimulus_id if b else None,
                "sequence_id": a.sequence_id,
                "start": a.start,
                "end": a.end,
                "source_a": a.source,
                "source_b": b.source if b else None,
                "rating": None if pairwise else v,
                "choice": v if pairwise else None,
                "passed": passed,
            }
            for d, v in answers.items()
        ]

    def item_page(self, participant: Participant, item: dict, action: str, heading: str) -> str:
        pairwise = "b" in item
        notice = None
        if item["kind"] == "attention":
            answer = item["answer"]
            notice = self.design.attention.instruction.format(
                answer=CHOICE_LABELS[answer] if pairwise else answer
            )
        sides = ("a", "b") if pairwise else ("a",)
        in_block = participant.step == "block"
        return render(
            "item",
            title=self.design.title,
            heading=heading,
            notice=notice,
            clips=[{"label": s.upper(), "stimulus_id": item[s]} for s in sides],
            muted=participant.condition == "muted",
            pairwise=pairwise,
            choices=[(c, CHOICE_LABELS[c]) for c in CHOICES],
            scale=range(SCALE[0], SCALE[1] + 1),
            scale_labels=self.design.scale_labels,
            questions=[
                {"dimension": d, "text": self.design.wording(d)}
                for d in self.design.dimensions(participant.condition)
            ],
            action=action,
            ended_action=f"/ended/{participant.position}" if in_block else None,
            progress=f"Item {participant.position + 1} of {len(participant.block)}"
            if in_block
            else "",
        )

    def page(self, participant: Participant) -> str:
        """The page of the participant's current step."""
        title = self.design.title
        if participant.step == "consent":
            return render(
                "text", title=title, text=self.design.consent, action="/consent", button="I agree"
            )
        if participant.step == "instructions":
            return render(
                "text",
                title=title,
                text=self.design.instructions,
                action="/instructions",
                button="Start the practice clip",
            )
        if participant.step == "practice":
            item = self.practice[participant.condition]
            return self.item_page(participant, item, "/practice", "Practice (not kept)")
        if participant.step == "block":
            position = participant.position
            return self.item_page(
                participant, participant.block[position], f"/item/{position}", "Please rate"
            )
        return render(
            "text",
            title=title,
            text=f"Thank you! Your completion code is {participant.completion_code}",
            action=None,
        )


def create_app(study: Study) -> FastAPI:
    app = FastAPI(title=study.design.title, docs_url=None, redoc_url=None, openapi_url=None)

    @app.get("/healthz")
    def healthz() -> dict:
        return {"ok": True}

    @app.get("/")
    def enter(request: Request) -> RedirectResponse:
        token = request.cookies.get(SESSION_COOKIE, "")
        if token and study.store.by_token(token) is not None:
            return see_other("/study")
        given = request.query_params.get(study.design.id_parameter)
        if given is not None and not PARTICIPANT_ID.fullmatch(given):
            raise HTTPException(422, "participant id: 1–200 letters, digits or _ . @ -")
        pid = given or f"anon-{secrets.token_hex(8)}"
        try:
            participant = study.store.create(pid, study.assign, study.design.completion_code)
        except ParticipantExists:
            raise HTTPException(
                409,
                "this participant id has a session already: continue in the browser it started in",
            ) from None
        response = see_other("/study")
        response.set_cookie(
            SESSION_COOKIE, participant.token, max_age=14 * 86400, httponly=True, samesite="lax"
        )
        return response

    @app.get("/study", response_class=HTMLResponse)
    def current(request: Request) -> str:
        return study.page(study.participant(request))

    def step(name: str):
        def advance(request: Request) -> RedirectResponse:
            participant = study.participant(request)
            if STEPS.index(participant.step) < STEPS.index(name):
                raise HTTPException(409, f"not at the {name} step yet")
            study.store.advance(participant, name)
            return see_other("/study")

        return advance

    app.post("/consent")(step("consent"))
    app.post("/instructions")(step("instructions"))

    @app.post("/practice")
    async def practice(request: Request) -> RedirectResponse:
        participant = await run_in_threadpool(study.participant, request)
        if participant.step == "practice":
            study.answer_rows(
                participant, study.practice[participant.condition], await request.form()
            )
        await run_in_threadpool(step("practice"), request)
        return see_other("/study")

    def block_item(participant: Participant, position: int) -> dict:
        """The participant's block item `position`, if it may be answered now (else 404/409)."""
        if STEPS.index(participant.step) < STEPS.index("block"):
            raise HTTPException(409, "the block has not started yet")
        if not 0 <= position < len(participant.block):
            raise HTTPException(404, f"no item {position} in this block")
        if position > participant.position:
            raise HTTPException(409, f"item {position} comes after the next one")
        return participant.block[position]

    @app.post("/ended/{position}", status_code=204)
    async def ended(position: int, request: Request) -> None:
        participant = await run_in_threadpool(study.participant, request)
        item = block_item(participant, position)
        stimulus = str((await request.form()).get("stimulus", ""))
        if stimulus not in study.stimuli:
            raise HTTPException(404, f"unknown stimulus {stimulus!r}")
        if stimulus not in (item["a"], item.get("b")):
            raise HTTPException(422, f"stimulus {stimulus!r} is not a clip of item {position}")
        await run_in_threadpool(study.store.played, participant, position, stimulus)

    @app.post("/item/{position}")
    async def answer(position: int, request: Request) -> RedirectResponse:
        participant = await run_in_threadpool(study.participant, request)
        item = block_item(participant, position)
        rows = study.answer_rows(participant, item, await request.form())
        clips = [item[s] for s in ("a", "b") if s in item]
        unplayed = await run_in_threadpool(study.store.unplayed, participant, position, clips)
        if unplayed:
            raise HTTPException(409, f"clip {unplayed[0]!r} has not been played to its end")
        outcome = await run_in_threadpool(study.store.answer, participant, position, rows)
        if outcome == "ahead":
            raise HTTPException(409, f"item {position} comes after the next one")
        if outcome == "different":
            raise HTTPException(
                409, f"item {position} was answered differently already (or at the same time)"
            )
        return see_other("/study")

    @app.get("/media/{stimulus_id}")
    def media(stimulus_id: str, request: Request) -> FileResponse:
        study.participant(request)
        if stimulus_id not in study.stimuli:
            raise HTTPException(404, f"unknown stimulus {stimulus_id!r}")
        return FileResponse(study.stimuli[stimulus_id].path, media_type="video/mp4")

    @app.get("/admin/progress", response_class=HTMLResponse)
    def progress(request: Request) -> str:
        study.require_admin(request)
        tables = progress_tables(study.store, study.stimuli, study.design.exclude_at)
        return render("tables", title=f"{study.design.title}: progress", tables=tables.items())

    @app.get("/admin/export.csv", response_class=PlainTextResponse)
    def export(request: Request) -> str:
        study.require_admin(request)
        if study.design.mode == "rating":
            return ratings_csv(ratings_table(study.store))
        return pairwise_csv(pairwise_table(study.store))

    return app
