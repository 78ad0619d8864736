"""Shared fixtures: the real BEAT2 sample folder (skipped with a reason where absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLE_DIR = REPO.parent / "shared" / "data" / "beat2-sample"


@pytest.fixture(scope="session")
def beat2_sample() -> Path:
    if not (SAMPLE_DIR / "2_scott_0_1_1.npz").exists():
        pytest.skip(f"real BEAT2 sample not found at {SAMPLE_DIR} (it lives in the project's shared/ folder)")
    return SAMPLE_DIR
