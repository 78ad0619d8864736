"""Process exit status of a launch: set when any job failed, read by `launch.py` after Hydra
returns."""

_code = 0


def mark_failed(code: int = 2) -> None:
    """A job failed: 2 for an error the user can act on, 1 for an unexpected one, 128 + the
    signal's number for a stopping signal (the larger code of all failures wins)."""
    global _code
    _code = max(_code, code)


def exit_code() -> int:
    return _code
