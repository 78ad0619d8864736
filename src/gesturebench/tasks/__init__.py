"""Tasks `launch.py` dispatches to: each module has `run(cfg) -> results`."""
