"""The study's database through SQLAlchemy Core: participants (their block, progress and session
token), responses (one row per rating) and plays (a clip reported played to its end); a versioned
schema.

Any SQLAlchemy URL works (SQLite file by default, PostgreSQL, …). Each rating is committed in its
own transaction; the one that stores an item's last rating also advances the participant past the
item. Every such transaction first touches the participant's row (`active_at`), which serialises
one participant's writes on every database (a row lock; SQLite's write lock).

A participant's row is created when its link is opened, but its arrival number (hence its condition
and block) only at consent: an entry whose reply was lost, a link prefetcher or a guessed id burns
no slot. Until it has stored a rating (or after the experimenter reopened it) an id can enter again;
the new entry gets a new session token, which ends the old one. An item is answered
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

from gesturebench.runtime.errors import DataError

#: Version of the tables below; a database of version 3 is migrated (`migrate_3`), one of any
#: other version refused.
SCHEMA_VERSION = 4
#: How a participant came in (`participants.entry`): a signed link, an id of the design's list, an
#: unsigned id from a link (allowed by the design), or a link without an id. The caps of the last
#: two count these, never the ids' text.
ENTRIES = ("signed", "listed", "unsigned", "anonymous")

metadata = MetaData()
schema_version = Table("schema_version", metadata, Column("version", Integer, nullable=False))
participants = Table(
    "participants",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("participant_id", String(200), nullable=False, unique=True),
    Column("token", String(64), nullable=False, unique=True),
    Column("condition", String(16), nullable=False),
    # arrival order among those who consented (null before consent); unique: two consents at once
    # cannot take the same slot
    Column("number", Integer, unique=True),
    Column("block", Text, nullable=False),
    Column("step", String(16), nullable=False),
    Column("position", Integer, nullable=False),
    Column("completion_code", String(64), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # the last write for this participant: set first in each of its transactions (the lock)
    Column("active_at", DateTime(timezone=True), nullable=False),
    Column("completed_at", DateTime(timezone=True)),
    # the experimenter reopened the id: its next entry gets a new session despite stored ratings
    Column("reopened", Boolean, nullable=False, default=False),
    # how it came in (one of ENTRIES)
    Column("entry", String(16), nullable=False),
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
    number: int | None
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


def migrate_3(conn: Connection) -> None:
    """Version 3 → 4: the column `participants.entry`. Rows written before it are marked
    `anonymous` when their id has the shape the server gave anonymous entries (`anon-` and 16 hex
    digits), else `unsigned` (what version 3 let in by default)."""
    conn.exec_driver_sql(
        "ALTER TABLE participants ADD COLUMN entry VARCHAR(16) DEFAULT 'unsigned' NOT NULL"
    )
    anonymous = participants.c.participant_id.startswith("anon-") & (
        func.length(participants.c.participant_id) == 21
    )
    conn.execute(update(participants).where(anonymous).values(entry="anonymous"))
    conn.execute(update(schema_version).values(version=SCHEMA_VERSION))


def open_engine(url: str) -> Engine:
    """The engine of `url` with the tables created, a version-3 database migrated and the schema
    version checked (`DataError` on another version or an unusable URL)."""
    try:
        engine = create_engine(url)
        if engine.dialect.name == "sqlite":
            event.listen(engine, "connect", sqlite_pragmas)
        metadata.create_all(engine)
        with engine.begin() as conn:
            found = conn.execute(select(schema_version.c.version)).scalars().all()
            if not found:
                conn.execute(insert(schema_version).values(version=SCHEMA_VERSION))
            elif found == [3]:
                migrate_3(conn)
            elif found != [SCHEMA_VERSION]:
                raise DataError(
                    url, f"study database schema version {found}, expected {SCHEMA_VERSION}"
                )
    except SQLAlchemyError as err:
        raise DataError(
            url, f"cannot open the study database ({type(err).__name__}: {err})"
        ) from None
    return engine


class Store:
    """The operations the app needs, each in one transaction."""

    def __init__(self, engine: Engine):
        self.engine = engine

    def enter(
        self, participant_id: str, completion_code: str | None, entry: str
    ) -> Participant | None:
        """A new session for `participant_id`: a new row (no condition yet; come in by `entry`, one
        of ENTRIES), or a new token for an existing one that has no rating stored or was reopened;
        None when it is taken (a rating stored: the id is in use in another browser)."""
        token = secrets.token_urlsafe(32)
        now = _now()
        try:
            with self.engine.begin() as conn:
                conn.execute(
                    insert(participants).values(
                        participant_id=participant_id,
                        token=token,
                        condition="",
                        block="[]",
                        step=STEPS[0],
                        position=0,
                        completion_code=completion_code or secrets.token_hex(4).upper(),
                        created_at=now,
                        active_at=now,
                        reopened=False,
                        entry=entry,
                    )
                )
        except IntegrityError:
            if not self._rekey(participant_id, token):
                return None
        return self.by_token(token)

    def _rekey(self, participant_id: str, token: str) -> bool:
        """Give the existing `participant_id` the session `token` if it may enter again."""
        row = participants.c.participant_id == participant_id
        with self.engine.begin() as conn:
            conn.execute(update(participants).where(row).values(active_at=_now()))  # the lock
            found = conn.execute(select(participants.c.id, participants.c.reopened).where(row))
            pk, reopened = found.one()
            rated = conn.execute(
                select(func.count()).select_from(responses).where(responses.c.participant == pk)
            ).scalar_one()
            if rated and not reopened:
                return False
            conn.execute(update(participants).where(row).values(token=token, reopened=False))
        return True

    def consent(
        self, participant: Participant, assign: Callable[[int], tuple[str, list[dict]]]
    ) -> None:
        """Move past consent, taking the next arrival number (once): `assign(number)` gives the
        condition and block. A number taken meanwhile by another consent (the unique column) is
        retried with the next one."""
        for _ in range(100):
            try:
                with self.engine.begin() as conn:
                    self._lock(conn, participant)
                    row = participants.c.id == participant.pk
                    if conn.execute(select(participants.c.number).where(row)).scalar_one() is None:
                        number = conn.execute(
                            select(func.count()).where(participants.c.number.is_not(None))
                        ).scalar_one()
                        condition, items = assign(number)
                        conn.execute(
                            update(participants)
                            .where(row)
                            .values(condition=condition, number=number, block=json.dumps(items))
                        )
                    conn.execute(
                        update(participants)
                        .where(row, participants.c.step == "consent")
                        .values(step=STEPS[1])
                    )
                return
            except IntegrityError:
                continue
        raise RuntimeError("no free arrival number after 100 tries")

    def reopen(self, participant_id: str) -> bool:
        """End the id's session and let its next entry start a new one, where it stopped (False:
        no such id)."""
        with self.engine.begin() as conn:
            done = conn.execute(
                update(participants)
                .where(participants.c.participant_id == participant_id)
                .values(token=secrets.token_urlsafe(32), reopened=True, active_at=_now())
            )
        return bool(done.rowcount)

    def count_entries(self, entry: str) -> int:
        """Participants who came in by `entry` (one of ENTRIES)."""
        with self.engine.connect() as conn:
            return conn.execute(
                select(func.count()).where(participants.c.entry == entry)
            ).scalar_one()

    def known(self, participant_id: str) -> bool:
        """Whether `participant_id` has a row (entered before)."""
        with self.engine.connect() as conn:
            found = conn.execute(
                select(participants.c.id).where(participants.c.participant_id == participant_id)
            ).first()
        return found is not None

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
