"""Errors a user can act on: `launch.py` prints them as one line and exits 2, without a
traceback."""

from __future__ import annotations

from pathlib import Path


class GestureBenchError(Exception):
    """Base class: the message alone must tell the user what is wrong and where."""


class DataError(GestureBenchError):
    """A data file is missing, unreadable or malformed."""

    def __init__(self, path: str | Path, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class ConfigError(GestureBenchError):
    """A configuration value is invalid or inconsistent."""


class CheckpointError(GestureBenchError):
    """A checkpoint, model file or model output needed by the run is missing or unusable."""


class LengthMismatchError(GestureBenchError):
    """Generated and reference motion differ in length by more than the allowed gap."""
