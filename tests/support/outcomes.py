"""The two outcomes a hostile input may have, checked the same way in every test and in the fault
script: refused (exit 2, one `error:` line, no traceback), or finished with results in which every
value is finite and everything that could not be scored is absent with its reason."""

from __future__ import annotations

import json
import math
from pathlib import Path


def refusal(code: int | str | None, err: str) -> str | None:
    """None when `code`, `err` are a refusal: exit 2, exactly one `error:` line, no traceback."""
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    if code != 2 or len(lines) != 1 or "Traceback" in err:
        return f"exit {code}, stderr: {err.strip()[-400:]}"
    return None


def unscorable(results: dict) -> str | None:
    """None when every value of `results` (a results.json document) is finite or absent with its
    reason, and every per-sequence value is finite."""
    for name, value in results["metrics"].items():
        if value is None and name not in results["skipped"]:
            return f"{name}: no value and no reason"
        if value is not None and not math.isfinite(value):
            return f"{name}: {value}"
    for row in results["per_sequence"]:
        for key, value in row.items():
            if isinstance(value, float) and not math.isfinite(value):
                return f"{row['sequence_id']} {key}: {value}"
    return None


def honest(code: int | str | None, err: str, run: Path) -> str | None:
    """None when a run ended as a hostile input allows: refused (`refusal`), or exit 0 with a
    complete results.json in `run` that passes `unscorable`; else why not."""
    if code not in (0, None):
        return refusal(code, err)
    path = Path(run) / "results.json"
    if not path.is_file():
        return "exit 0 without results.json"
    results = json.loads(path.read_text())
    if not results.get("complete"):
        return "exit 0 with an incomplete results.json"
    return unscorable(results)
