"""The study's database through SQLAlchemy Core: participants (their block, progress and session
token), responses (one row per rating) and plays (a clip reported played to its end); a versioned
schema.

Any SQLAlchemy URL works (SQLite file by default, PostgreSQL, …). Each rating is committed in its
own transaction; the one that stores an item's last rating also advances the participant past the
item. Every such transaction first touches the participant's row (`active_at`), which serialises
one participant's writes on every database (a row lock; SQLite's write lock). An item is answered
once its participant is past it: a crash between two ratings of an item leaves that item
unanswered, its stored ratings unacknowledged and left out of the export; the participant is shown
the item again and the next submission overwrites them. A replay of an answered item is a no-op.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from gesturebench.errors import DataError

#: Version of the tables below; a database written with another version is refused.
SCHEMA_VERSION = 3

metadata = MetaData()
schema_version = Table("schema_version", metadata, Column("version", Integer, nullable=False))
participants = Table(
    "participants",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("participant_id", String(200), nullable=False, unique=True),
    Column("token", String(64), nullable=False, unique=True),
    Column("condition", String(16), nullable=False),
    Column("number", Integer, nullable=False),
    Column("block", Text, nullable=False),
    Column("step", String(16), nullable=False),
    Column("position", Integer, nullable=False),
    Column("completion_code", String(64), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # the last write for this participant: set first in each of its transactions (the lock)
    Column("active_at", DateTime(timezone=True), nullable=False),
    Column("completed_at", DateTime(timezone=True)),
)


def _block_item() -> list[Column]:
    """A row's id and the block item it is about: participant and position."""
    return [
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("participant", Integer, ForeignKey("participants.id"), nullable=False),
        Column("position", Integer, nullable=False),
    ]


responses = Table(
    "responses",
    metadata,
    *_block_item(),
    Column("kind", String(16), nullable=False),
    Column("dimension", String(16), nullable=False),
    Column("stimulus_a", String(200), nullable=False),
    Column("stimulus_b", String(200)),
    Column("sequence_id", String(200), nullable=False),
    # the rated window of the sequence (seconds), from the manifest: the stimulus's identity
    Column("start", Float, nullable=False),
    Column("end", Float, nullable=False),
    Column("source_a", String(200), nullable=False),
    Column("source_b", String(200)),
    Column("rating", Integer),
    Column("choice", String(8)),
    Column("passed", Boolean),
    Column("created_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("participant", "position", "dimension"),
)
plays = Table(
    "plays",
    metadata,
    *_block_item(),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("stimulus", String(200), nullable=False),
    UniqueConstraint("participant", "position", "stimulus"),
)

#: A participant's steps before and after its block.
STEPS = ("consent", "instructions", "practice", "block", "complete")


@dataclass(frozen=True)
class Participant:
    pk: int
    participant_id: str
    token: str
    condition: str
    number: int
    block: list[dict]
    step: str
    position: int
    completion_code: str


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _participant(row: Any) -> Participant:
    return Participant(
        row.id,
        row.participant_id,
        row.token,
        row.condition,
        row.number,
        json.loads(row.block),
        row.step,
        row.position,
        row.completion_code,
    )


def sqlite_pragmas(connection: Any, _record: Any) -> None:
    """SQLite: write-ahead log (readers do not block the writer) and a patient lock wait."""
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def open_engine(url: str) -> Engine:
    """The engine of `url` with the tables created and the schema version checked (`DataError` on
    another version or an unusable URL)."""
    try:
        engine = create_engine(url)
        if engine.dialect.name == "sqlite":
            event.listen(engine, "connect", sqlite_pragmas)
        metadata.create_all(engine)
        with engine.begin() as conn:
            found = conn.execute(select(schema_version.c.version)).scalars().all()
            if not found:
                conn.execute(insert(schema_version).values(version=SCHEMA_VERSION))
            elif found != [SCHEMA_VERSION]:
                raise DataError(
                    url, f"study database schema version {found}, expected {SCHEMA_VERSION}"
                )
    except SQLAlchemyError as err:
        raise DataError(
            url, f"cannot open the study database ({type(err).__name__}: {err})"
        ) from None
    return engine


class ParticipantExists(Exception):
    """The participant id already has a session."""


class Store:
    """The operations the app needs, each in one transaction."""

    def __init__(self, engine: Engine):
        self.engine = engine

    def create(
        self,
        participant_id: str,
        assign: Callable[[int], tuple[str, list[dict]]],
        completion_code: str | None,
    ) -> Participant:
        """A new participant numbered in arrival order; `assign(number)` gives its condition and
        block. `ParticipantExists` if the id is taken."""
        token = secrets.token_urlsafe(32)
        now = _now()
        try:
            with self.engine.begin() as conn:
                inserted = conn.execute(
                    insert(participants).values(
                        participant_id=participant_id,
                        token=token,
                        condition="",
                        number=-1,
                        block="[]",
                        step=STEPS[0],
                        position=0,
                        completion_code=completion_code or secrets.token_hex(4).upper(),
                        created_at=now,
                        active_at=now,
                    )
                ).inserted_primary_key
                assert inserted is not None
                pk = inserted[0]
                # arrival order = participants inserted before this one (ids may have gaps)
                number = conn.execute(
                    select(func.count()).select_from(participants).where(participants.c.id < pk)
                ).scalar_one()
                condition, items = assign(number)
                conn.execute(
                    update(participants)
                    .where(participants.c.id == pk)
                    .values(condition=condition, number=number, block=json.dumps(items))
                )
        except IntegrityError:
            raise ParticipantExists(participant_id) from None
        found = self.by_token(token)
        assert found is not None
        return found

    def by_token(self, token: str) -> Participant | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(participants).where(participants.c.token == token)).first()
        return None if row is None else _participant(row)

    def advance(self, participant: Participant, step: str) -> None:
        """Move past `step` (a no-op if the participant is already further)."""
        following = STEPS[STEPS.index(step) + 1]
        with self.engine.begin() as conn:
            conn.execute(
                update(participants)
                .where(participants.c.id == participant.pk, participants.c.step == step)
                .values(step=following)
            )

    @staticmethod
    def _lock(conn: Connection, participant: Participant) -> int:
        """Touch the participant's row (serialising its writes) and return its position."""
        conn.execute(
            update(participants).where(participants.c.id == participant.pk).values(active_at=_now())
        )
        return conn.execute(
            select(participants.c.position).where(participants.c.id == participant.pk)
        ).scalar_one()

    @staticmethod
    def answered(conn: Connection, participant: Participant, position: int) -> dict:
        rows = conn.execute(
            select(responses.c.dimension, responses.c.rating, responses.c.choice).where(
                responses.c.participant == participant.pk, responses.c.position == position
            )
        )
        return {r.dimension: r.rating if r.choice is None else r.choice for r in rows}

    def answer(self, participant: Participant, position: int, rows: list[dict]) -> str:
        """Store the ratings `rows` (responses' columns) of block item `position`, each in its own
        transaction (`rate`); the last one advances the participant.

        Returns "stored"; "same" for a replay of an answered item; "different" for other answers to
        an answered item, or when another submission of the item changed a rating meanwhile;
        "ahead" for an item after the next one (the last three store nothing more)."""
        answers = {
            r["dimension"]: r["rating"] if r.get("choice") is None else r["choice"] for r in rows
        }
        for k, row in enumerate(rows):
            outcome = self.rate(participant, position, row, answers, last=k + 1 == len(rows))
            if outcome != "stored":
                return outcome
        return "stored"

    def rate(
        self, participant: Participant, position: int, row: dict, answers: dict, last: bool
    ) -> str:
        """One rating of the participant's current item in one transaction (a rating stored by an
        unfinished earlier submission is overwritten); with `last`, it is stored only if the item's
        ratings then equal `answers` (another submission may have changed one meanwhile), and the
        participant advances. See `answer` for the outcomes."""
        with self.engine.begin() as conn:
            current = self._lock(conn, participant)
            stored = self.answered(conn, participant, position)
            if position > current:
                return "ahead"
            if position < current:
                return "same" if stored == answers else "different"
            dimension = row["dimension"]
            if last and {**stored, dimension: answers[dimension]} != answers:
                return "different"
            now = _now()
            values = {**row, "participant": participant.pk, "position": position, "created_at": now}
            if dimension in stored:
                conn.execute(
                    update(responses)
                    .where(
                        responses.c.participant == participant.pk,
                        responses.c.position == position,
                        responses.c.dimension == dimension,
                    )
                    .values(**values)
                )
            else:
                conn.execute(insert(responses).values(**values))
            if last:
                done = position + 1 == len(participant.block)
                conn.execute(
                    update(participants)
                    .where(participants.c.id == participant.pk)
                    .values(
                        position=position + 1,
                        **({"step": "complete", "completed_at": now} if done else {}),
                    )
                )
        return "stored"

    def played(self, participant: Participant, position: int, stimulus: str) -> None:
        """Record that `stimulus` of block item `position` played to its end (idempotent)."""
        with self.engine.begin() as conn:
            self._lock(conn, participant)
            found = conn.execute(
                select(plays.c.id).where(
                    plays.c.participant == participant.pk,
                    plays.c.position == position,
                    plays.c.stimulus == stimulus,
                )
            ).first()
            if found is None:
                conn.execute(
                    insert(plays).values(
                        participant=participant.pk,
                        position=position,
                        stimulus=stimulus,
                        created_at=_now(),
                    )
                )

    def unplayed(self, participant: Participant, position: int, stimuli: list[str]) -> list[str]:
        """Those of `stimuli` not recorded played to their end at block item `position`."""
        with self.engine.connect() as conn:
            done = set(
                conn.execute(
                    select(plays.c.stimulus).where(
                        plays.c.participant == participant.pk, plays.c.position == position
                    )
                ).scalars()
            )
        return [s for s in stimuli if s not in done]

    def responses(self) -> list[Any]:
        """Every rating of an answered item (one its participant is past) joined with its
        participant, in participant then block order."""
        query = (
            select(
                participants.c.participant_id,
                participants.c.condition,
                responses,
            )
            .join(
                participants,
                (participants.c.id == responses.c.participant)
                & (responses.c.position < participants.c.position),
            )
            .order_by(participants.c.id, responses.c.position, responses.c.id)
        )
        with self.engine.connect() as conn:
            return list(conn.execute(query))

    def participants(self) -> list[Participant]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(participants).order_by(participants.c.id))
            return [_participant(r) for r in rows]
