"""gesturebench entry point: `python launch.py [task=...] [group=option ...] [-m]` (see README).

The same as the `gesturebench` command, reading the configs of this checkout's `conf/`."""

from pathlib import Path

from gesturebench.cli import launch_process

if __name__ == "__main__":
    launch_process(str(Path(__file__).resolve().parent / "conf"))
