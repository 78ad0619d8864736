"""Process exit status of a launch: set when any job failed, read by `launch.py` after Hydra
returns."""

_failed = False


def mark_failed() -> None:
    global _failed
    _failed = True


def exit_code() -> int:
    return 2 if _failed else 0
