"""The results stage: results.json and per_sequence.csv, the tables of several results (a sweep's
summary and comparisons, the leaderboard, sweep plots), the headline table printed at the end of a
run, and the run loggers."""
