"""gesturebench entry point: `python launch.py [task=...] [group=option ...] [-m]` (see README).

The same as the `gesturebench` command, reading the configs of this checkout's `conf/`."""

from pathlib import Path

from gesturebench.cli import launch

if __name__ == "__main__":
    launch(str(Path(__file__).resolve().parent / "conf"))
