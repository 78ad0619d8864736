"""The collected answers as the analysis reads them: the ratings file of `task=analyze`
(`study.schema.COLUMNS`), the pairwise file of `task=analyze study=pairwise`, and the
experimenter's progress tables."""

from __future__ import annotations

import pandas as pd

from gesturebench.study.schema import ATTENTION, COLUMNS
from gesturebench.study.server.manifest import Stimulus
from gesturebench.study.server.store import Store, responses

#: Columns of the responses joined with their participant.
RESPONSE_COLUMNS = ["participant_id", "condition", *responses.columns.keys()]


def response_frame(store: Store) -> pd.DataFrame:
    return pd.DataFrame([r._asdict() for r in store.responses()], columns=RESPONSE_COLUMNS)


def _one_mode(frame: pd.DataFrame, kind: str) -> pd.DataFrame:
    """The answers of `kind` (rating or pair) and one row per attention check (its rows share
    participant and position; dimension `attention`), in participant then block order."""
    checks = frame[frame["kind"] == "attention"]
    checks = checks.groupby(["participant", "position"], sort=False).first().reset_index()
    checks = checks.assign(dimension=ATTENTION, rating=pd.NA, choice=pd.NA)
    answers = frame[frame["kind"] == kind].assign(passed=pd.NA)
    out = pd.concat([answers, checks]).sort_values(["participant", "position"], kind="stable")
    out["passed"] = out["passed"].astype("boolean")
    return out.reset_index(drop=True)


def ratings_table(store: Store) -> pd.DataFrame:
    """Rating-mode answers in the ratings-file format: one row per rating, one per attention
    check."""
    frame = response_frame(store)
    out = _one_mode(frame[frame["stimulus_b"].isna()], "rating")
    out["rating"] = out["rating"].astype("Int64")
    return out.rename(columns={"source_a": "source"}).loc[:, list(COLUMNS)]


def pairwise_table(store: Store) -> pd.DataFrame:
    """Pairwise answers in the pairwise-file format: one row per comparison (`winner` a, b or tie),
    one per attention check."""
    from gesturebench.study.pairwise import PAIRWISE_COLUMNS  # the analysis: not at start-up

    frame = response_frame(store)
    out = _one_mode(frame[frame["stimulus_b"].notna()], "pair")
    return out.rename(columns={"choice": "winner"}).loc[:, list(PAIRWISE_COLUMNS)]


def progress_tables(
    store: Store, stimuli: dict[str, Stimulus], exclude_at: int
) -> dict[str, pd.DataFrame]:
    """`participants` (condition, items answered of its block, attention checks failed, excluded)
    and `stimuli` (per stimulus of the manifest: participants that answered it, all and those not
    excluded)."""
    frame = response_frame(store)
    people = pd.DataFrame(
        [
            (p.participant_id, p.condition, p.position, len(p.block), p.step == "complete")
            for p in store.participants()
        ],
        columns=["participant_id", "condition", "answered", "items", "complete"],
    )
    checks = frame[frame["kind"] == "attention"].drop_duplicates(["participant", "position"])
    failed = (~checks["passed"].astype(bool)).groupby(checks["participant_id"]).sum()
    people["failed_checks"] = people["participant_id"].map(failed).fillna(0).astype(int)
    people["excluded"] = people["failed_checks"] >= exclude_at
    excluded = set(people.loc[people["excluded"], "participant_id"])
    items = frame[frame["kind"] != "attention"].drop_duplicates(["participant", "position"])
    seen = pd.concat(
        [
            items[["participant_id", "stimulus_a"]],
            items[["participant_id", "stimulus_b"]]
            .dropna()
            .rename(columns={"stimulus_b": "stimulus_a"}),
        ]
    )
    kept = seen[~seen["participant_id"].isin(excluded)]
    counts = pd.DataFrame(
        [(sid, s.condition, s.source, s.sequence_id) for sid, s in stimuli.items()],
        columns=["stimulus_id", "condition", "source", "sequence_id"],
    )
    counts["participants"] = counts["stimulus_id"].map(seen["stimulus_a"].value_counts())
    counts["kept"] = counts["stimulus_id"].map(kept["stimulus_a"].value_counts())
    counts[["participants", "kept"]] = counts[["participants", "kept"]].fillna(0).astype(int)
    return {"participants": people, "stimuli": counts}
