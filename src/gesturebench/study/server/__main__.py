"""Restart a study server in seconds: `python -m gesturebench.study.server <study folder>
[key=value ...]` serves the study of `<study folder>` (the folder `task=study_server` printed,
`outputs/study_server/<task.study>`) with the resolved config it wrote there (`server.yaml`;
dotted overrides in the launch's words, e.g. `task.port=8001`, on top).

`python launch.py task=study_server` composes the config, which registers every task's schema and
so imports torch, Lightning and scikit-learn (about 35 s on a loaded machine before `/healthz`
answers); the server needs none of them. This entry reads its own file and imports only the server
(a few seconds).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from gesturebench.runtime.errors import GestureBenchError
from gesturebench.study.server.serve import load_config


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    logging.basicConfig(
        level=logging.INFO, format="[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"
    )
    try:
        options, url = load_config(Path(argv[0]), argv[1:])
        options.serve(url)
    except GestureBenchError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
