"""The study's FastAPI app: the participant flow (consent → instructions → practice → block →
completion code) on one page address, `/study`, that always shows where the participant stands, so
a reload or a reopened tab resumes; the media; the experimenter's token-protected progress and
export.

A participant is known by an unguessable session token in an HTTP-only, same-site cookie, never by
its participant id. Every submission is validated against the participant's own block (the clip of
that page, the condition's dimensions, the answer range) before anything is stored: a bad one gets a
4xx and changes nothing. Answering an item already answered with the same answers is acknowledged
as if it were new (a double click, a resent form); with other answers it is refused.

A link opens a session for its participant id when something vouches for the id: its signature
(with the study's secret; then every link must be signed) or the design's id list; unsigned ids
and links without an id are refused unless the design allows them, each kind then capped and
rate-limited (`EntryGate`, counting the stored entry kind, never the id's text). The id may open a
new session until it has stored a rating, so that a lost reply or a prefetched link locks nobody
out; its slot (condition and block) is taken at consent. A session fetches only the clips of its
own practice item and block.

Every error a participant can meet is a page in the study's look, in the participant's words; a
client that asks for JSON only (`Accept: application/json`) gets `{"detail": …}`. Every response
carries the security headers (`SecurityHeaders`); a POST from another origin is refused.

The video-end rule holds on the server too: the page posts `/ended/<position>` when a clip of a
block item has played to its end (then unlocks the questions), and the item's answers are refused
(409, nothing stored) until every clip of the item was reported so.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import deque
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exception_handlers import (
    http_exception_handler,
    request_validation_exception_handler,
)
from fastapi.exceptions import RequestValidationError
from fastapi.responses import (
    FileResponse,
    HTMLResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gesturebench.runtime.errors import ConfigError
from gesturebench.study.ratings import ratings_csv
from gesturebench.study.schema import SCALE
from gesturebench.study.server.design import (
    CHOICES,
    PARTICIPANT_ID,
    EntryLimit,
    StudyDesign,
    block,
    conditions,
    layout,
    read_ids,
)
from gesturebench.study.server.export import pairwise_table, progress_tables, ratings_table
from gesturebench.study.server.manifest import Stimulus
from gesturebench.study.server.pages import SCRIPT, STYLE, render
from gesturebench.study.server.store import STEPS, Participant, Store

SESSION_COOKIE = "gb_session"
#: The URL parameter of a signed link's signature.
SIGNATURE = "sig"
CHOICE_LABELS = {"a": "Clip A", "b": "Clip B", "tie": "No difference"}
#: The answers a rating may be, as posted (checked as strings: nothing long reaches `int`).
RATINGS = {str(v): v for v in range(SCALE[0], SCALE[1] + 1)}

#: What a participant reads for a refusal of each status (`Refusal.say` where more is known).
WORDS = {
    400: "This page cannot be shown. Please open the study from the link you were given.",
    401: (
        "We could not find your study session. Please open the study again from the link you "
        "were given, in the same browser."
    ),
    403: "This link is not valid. Please open the study from the exact link you were given.",
    404: "This page does not exist. Please go back to the study.",
    405: "This page does not exist. Please go back to the study.",
    409: "This page is out of date. Please continue from your current page of the study.",
    422: (
        "Your answer could not be read. Please go back to your current page and answer every "
        "question."
    ),
    429: "Many people are joining right now. Please wait a minute, then open the link again.",
    500: "Something went wrong on our side. Please try again in a moment.",
}
#: Statuses whose page offers a way back to the participant's current page.
BACK = {404, 405, 409, 422}

#: Added to every response: no inline or foreign code, no framing, no MIME sniffing, no referrer
#: sent to other sites.
SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; media-src 'self'; "
        b"img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; "
        b"frame-ancestors 'none'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
]


class SecurityHeaders:
    """ASGI middleware adding `SECURITY_HEADERS` to every HTTP response."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class Refusal(HTTPException):
    """A refusal with what the participant reads (`say`; default: `WORDS` of the status)."""

    def __init__(self, status: int, detail: str, say: str | None = None, **kwargs: Any):
        super().__init__(status, detail, **kwargs)
        self.say = say


def link_signature(secret: str, participant_id: str) -> str:
    """The `sig` of a signed link: HMAC-SHA256 of the participant id with the study's secret."""
    return hmac.new(secret.encode(), participant_id.encode(), hashlib.sha256).hexdigest()


async def same_origin(request: Request) -> None:
    """Refuse a POST whose `Origin` (or, without one, `Referer`) names another host than the
    request's `Host` (`Origin: null` included). A POST with neither header is no browser's
    cross-site request (browsers send `Origin` with every POST) and passes."""
    if request.method != "POST":
        return
    origin = request.headers.get("origin") or request.headers.get("referer")
    if origin is not None and urlsplit(origin).netloc != request.headers.get("host"):
        raise Refusal(403, f"cross-origin POST refused (origin {origin[:100]!r})")


class EntryGate:
    """New ids of one entry kind let in under its `EntryLimit`: off unless allowed, at most `limit`
    stored participants of that kind, `per_minute` new ones in any minute (429 with `Retry-After`
    beyond; 403 at the limit)."""

    def __init__(self, kind: str, rule: EntryLimit, off: tuple[int, str]):
        self.kind = kind
        self.rule = rule
        self.off = off  # the refusal (status, detail) while the rule is off
        self.times: deque[float] = deque()  # times of the last minute's entries
        self.lock = threading.Lock()

    def enter(
        self, store: Store, participant_id: str, completion_code: str | None
    ) -> Participant | None:
        """`Store.enter` of a new id of this kind, if the rule lets it in now."""
        if not self.rule.allowed:
            raise Refusal(*self.off)
        with self.lock:
            now = time.monotonic()
            while self.times and self.times[0] < now - 60:
                self.times.popleft()
            if len(self.times) >= self.rule.per_minute:
                wait = int(self.times[0] + 61 - now)
                raise Refusal(
                    429,
                    f"too many {self.kind} entries a minute",
                    headers={"Retry-After": str(wait)},
                )
            if store.count_entries(self.kind) >= self.rule.limit:
                raise Refusal(
                    403,
                    f"the limit of {self.kind} participants is reached",
                    "This study has all the participants it needs. Thank you for your interest!",
                )
            self.times.append(now)
            return store.enter(participant_id, completion_code, self.kind)


def see_other(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


class Study:
    """The app's state: stimuli, design, the store, each condition's item layout and practice
    item."""

    def __init__(
        self,
        stimuli: Mapping[str, Stimulus],
        design: StudyDesign,
        store: Store,
        token: str | None,
        link_secret: str | None = None,
    ):
        self.stimuli = dict(stimuli)
        self.design = design
        self.store = store
        self.admin_token = token
        self.link_secret = link_secret
        if link_secret is not None and (design.ids_file or design.unsigned.allowed):
            raise ConfigError(
                "links are signed (the link secret is set): task.design.ids_file and "
                "task.design.unsigned do not apply; unset one or the other"
            )
        self.ids = read_ids(design.ids_file) if design.ids_file else frozenset()
        self.anonymous = EntryGate(
            "anonymous", design.anonymous, (400, f"no {design.id_parameter} in the link")
        )
        self.unsigned = EntryGate(
            "unsigned",
            design.unsigned,
            (403, "unsigned participant id: not in task.design.ids_file, unsigned ids are off"),
        )
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

    def entry(self, request: Request) -> Participant:
        """A new session for the link's participant id (checked: signed when links are signed,
        else listed, else an unsigned id within its limits), or for a new anonymous id."""
        code = self.design.completion_code
        given = request.query_params.get(self.design.id_parameter)
        if given is None:
            found = self.anonymous.enter(self.store, f"anon-{secrets.token_hex(8)}", code)
        elif not PARTICIPANT_ID.fullmatch(given):
            raise Refusal(422, "participant id: 1–200 letters, digits or _ . @ -", WORDS[403])
        elif self.link_secret is not None:
            sig = request.query_params.get(SIGNATURE, "")
            if not hmac.compare_digest(
                sig.encode(), link_signature(self.link_secret, given).encode()
            ):
                raise Refusal(403, "missing or wrong link signature")
            found = self.store.enter(given, code, "signed")
        elif given in self.ids:
            found = self.store.enter(given, code, "listed")
        elif self.design.unsigned.allowed and self.store.known(given):
            found = self.store.enter(given, code, "unsigned")  # re-entry: no new id
        else:
            found = self.unsigned.enter(self.store, given, code)
        if found is None:
            raise Refusal(
                409,
                "this participant id has a session already: continue in the browser it started in",
                "You have already started this study in another browser or window: please continue "
                "there. If you cannot, write to the researcher with your participant id.",
            )
        return found

    def clips(self, participant: Participant) -> set[str]:
        """The stimuli the participant may fetch: its practice item's and its block's."""
        if participant.number is None:
            return set()
        items = [self.practice[participant.condition], *participant.block]
        return {item[side] for item in items for side in ("a", "b") if side in item}

    def require_admin(self, request: Request) -> None:
        """The experimenter's token, only as `Authorization: Bearer <token>` (never in a URL,
        where logs and browser histories keep it)."""
        if not self.admin_token:
            raise HTTPException(503, "the experimenter pages are off: no admin token was set")
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme != "Bearer" or not secrets.compare_digest(
            given.encode(), self.admin_token.encode()
        ):
            raise HTTPException(403, "wrong or missing admin token (Authorization: Bearer <token>)")

    def answer_rows(
        self, participant: Participant, item: dict, form: Mapping[str, Any]
    ) -> list[dict]:
        """The responses' rows of the answers `form` to `item`, validated (`HTTPException` 404 for
        an unknown stimulus, 422 for anything else wrong)."""
        for side in ("a", "b") if "b" in item else ("a",):
            given = str(form.get(f"stimulus_{side}", ""))
            if given not in self.stimuli:
                raise HTTPException(404, f"unknown stimulus {given[:200]!r}")
            if given != item[side]:
                raise HTTPException(422, f"stimulus {given!r} is not the clip of this page")
        pairwise = "b" in item
        answers: dict[str, int | str] = {}
        for dimension in self.design.dimensions(participant.condition):
            value = str(form.get(dimension, ""))
            if pairwise:
                if value not in CHOICES:
                    raise HTTPException(422, f"{dimension}: answer a, b or tie, got {value[:20]!r}")
                answers[dimension] = value
            else:
                if value not in RATINGS:
                    raise HTTPException(
                        422,
                        f"{dimension}: rating must be {SCALE[0]}–{SCALE[1]}, got {value[:20]!r}",
                    )
                answers[dimension] = RATINGS[value]
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


def wants_json(request: Request) -> bool:
    """The client asked for JSON and not for a page (an API client, not a browser)."""
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


def error_page(study: Study, request: Request, status: int, say: str | None) -> HTMLResponse:
    """A refusal as a page in the study's look, in the participant's words."""
    text = say or WORDS.get(status, WORDS[500 if status >= 500 else 400])
    back = status in BACK and SESSION_COOKIE in request.cookies
    page = render(
        "error",
        title=study.design.title,
        heading="Sorry",
        text=text,
        link="/study" if back else None,
        link_text="Back to the study",
    )
    return HTMLResponse(page, status_code=status)


def add_error_pages(app: FastAPI, study: Study) -> None:
    """Every refusal (and a server error) as `error_page`, or as FastAPI's JSON to a client
    that asks for JSON only."""

    @app.exception_handler(StarletteHTTPException)
    async def refused(request: Request, exc: StarletteHTTPException) -> Response:
        if wants_json(request):
            return await http_exception_handler(request, exc)
        response = error_page(study, request, exc.status_code, getattr(exc, "say", None))
        response.headers.update(exc.headers or {})
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        if wants_json(request):
            return await request_validation_exception_handler(request, exc)
        return error_page(study, request, 422, None)

    @app.exception_handler(Exception)
    async def failed(request: Request, exc: Exception) -> Response:
        if wants_json(request):
            return Response('{"detail":"internal error"}', 500, media_type="application/json")
        return error_page(study, request, 500, None)


def create_app(study: Study) -> FastAPI:
    app = FastAPI(
        title=study.design.title,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        dependencies=[Depends(same_origin)],
    )
    app.add_middleware(SecurityHeaders)
    add_error_pages(app, study)

    @app.get("/healthz")
    def healthz() -> dict:
        return {"ok": True}

    @app.get("/static/study.css")
    def style() -> Response:
        return Response(STYLE, media_type="text/css")

    @app.get("/static/study.js")
    def script() -> Response:
        return Response(SCRIPT, media_type="text/javascript")

    @app.get("/")
    def enter(request: Request) -> RedirectResponse:
        token = request.cookies.get(SESSION_COOKIE, "")
        if token and study.store.by_token(token) is not None:
            return see_other("/study")
        participant = study.entry(request)
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

    @app.post("/consent")
    def consent(request: Request) -> RedirectResponse:
        participant = study.participant(request)
        if participant.step == "consent":
            study.store.consent(participant, study.assign)
        return see_other("/study")

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
            raise Refusal(
                409,
                f"clip {unplayed[0]!r} has not been played to its end",
                "Please watch every clip of the page to its end before answering.",
            )
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
        participant = study.participant(request)
        if stimulus_id not in study.stimuli:
            raise HTTPException(404, f"unknown stimulus {stimulus_id[:200]!r}")
        if stimulus_id not in study.clips(participant):
            raise HTTPException(403, f"stimulus {stimulus_id!r} is not in this session's block")
        return FileResponse(study.stimuli[stimulus_id].path, media_type="video/mp4")

    @app.get("/admin/progress", response_class=HTMLResponse)
    def progress(request: Request) -> str:
        study.require_admin(request)
        tables = progress_tables(study.store, study.stimuli, study.design.exclude_at)
        return render("tables", title=f"{study.design.title}: progress", tables=tables.items())

    @app.post("/admin/participants/{participant_id}/reset")
    def reset(participant_id: str, request: Request) -> dict:
        """End the participant's session; its next entry starts a new one where it stopped."""
        study.require_admin(request)
        if not study.store.reopen(participant_id):
            raise HTTPException(404, f"no participant {participant_id[:200]!r}")
        return {"participant_id": participant_id, "reset": True}

    @app.get("/admin/export.csv", response_class=PlainTextResponse)
    def export(request: Request) -> str:
        study.require_admin(request)
        if study.design.mode == "rating":
            return ratings_csv(ratings_table(study.store))
        from gesturebench.study.pairwise import pairwise_csv  # the analysis: not at start-up

        return pairwise_csv(pairwise_table(study.store))

    return app
