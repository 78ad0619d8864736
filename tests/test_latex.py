"""LaTeX tables (reporting/latex.py, docs/outputs.md "LaTeX tables"): the golden summary.tex of a
fixed sweep (tests/fixtures/latex/rows.json: a 3-model mini-BEAT2 sweep's results.json documents,
trimmed, with a failed job and a model name full of LaTeX's special characters), compiled by
pdflatex and its page rendered and read back; the bold and the daggers checked against scipy's
paired permutation test and Holm's correction written out here; the caption from the protocol
statements."""

from __future__ import annotations

import json
import os
import re
import subprocess
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from scipy import stats

from gesturebench.reporting.latex import (
    PREAMBLE,
    caption,
    escape,
    latex_document,
    latex_table,
    number,
    write_latex_leaderboard,
    write_latex_summary,
)
from gesturebench.run.protocol import STATEMENTS
from gesturebench.runtime.errors import ConfigError
from tests.support.latex import compile_pdf
from tests.support.requires import REPO, require_latex

FIXTURES = REPO / "tests" / "fixtures" / "latex"
ROWS = FIXTURES / "rows.json"
GOLDEN = FIXTURES / "summary.tex"


def fixed_rows() -> list[dict]:
    return json.loads(ROWS.read_text())["rows"]


def separated() -> list[dict]:
    """Rows of 8 made-up sequences (dataset `synthetic`, preset `fast`): on `v` (lower is better)
    the best row is told apart from both others (bold); on `w` (higher) the second row is not told
    apart from the best (dagger). The real sweep's split has 4 sequences, too few for either."""
    rng = np.random.default_rng(5)
    v = {m: base + rng.normal(0, 0.01, 8) for m, base in (("a", 1), ("b", 2), ("c", 3))}
    a = 5 + rng.normal(0, 0.3, 8)
    w = {"a": a, "b": a + np.array([0.3, -0.3] * 4) - 0.05, "c": 1 + rng.normal(0, 0.01, 8)}
    rows = synthetic(v)
    for row, per in zip(rows, w.values()):
        row["dataset"] = "synthetic"
        row["metrics"]["w"] = float(np.mean(per))
        row["directions"]["w"] = "higher"
        row["options"]["w"] = {}
        for record, x in zip(row["per_sequence"], per):
            record["w"] = float(x)
    return rows


def golden_rows() -> list[dict]:
    """The fixed sweep's rows, then the made-up rows that show the bold and the dagger."""
    return fixed_rows() + separated()


def test_the_summary_matches_the_golden_tex(tmp_path):
    """summary.tex of the fixed rows, byte for byte. After an intended change of the tables,
    rewrite it with `GESTUREBENCH_WRITE_GOLDEN=1 python -m pytest -n 0 tests/test_latex.py -k
    golden`, compile it, look at it, and commit it."""
    path = write_latex_summary(tmp_path, golden_rows(), title="Sweep of the fixed rows")
    assert path == tmp_path / "summary.tex"
    if os.environ.get("GESTUREBENCH_WRITE_GOLDEN") == "1":
        GOLDEN.write_text(path.read_text())
    assert GOLDEN.is_file(), f"{GOLDEN} is missing: it is committed with the tests"
    assert path.read_text() == GOLDEN.read_text()
    assert GOLDEN.read_text().count(r"\begin{table}") == 2  # the sweep's and the made-up rows'
    assert r"\textbf{" in GOLDEN.read_text() and r"$^\dagger$" in GOLDEN.read_text()


def words(pdf: Path) -> list[tuple[str, float, float, float, float]]:
    """(word, xmin, ymin, xmax, ymax) in PDF points of the first page (pdftotext -bbox)."""
    tools = require_latex()
    html = subprocess.run(
        [tools["pdftotext"], "-bbox", "-f", "1", "-l", "1", str(pdf), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    pattern = (
        r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>'
    )
    return [
        (w, float(a), float(b), float(c), float(d)) for a, b, c, d, w in re.findall(pattern, html)
    ]


def as_read(value: float) -> str:
    """`value` with 4 significant digits as pdftotext reads the table's number back."""
    mantissa, _, exponent = f"{value:.4g}".partition("e")
    shown = mantissa + (f"×10{int(exponent)}" if exponent else "")
    return shown.replace("-", "−")


def test_the_summary_compiles_and_its_page_shows_the_table(tmp_path):
    """pdflatex compiles summary.tex without an error or an overfull line; pdftotext finds every
    metric's name and every shown value; the page rendered at 200 dpi has ink inside the box of
    each metric's name and each model's name (located by pdftotext), and blank paper outside the
    text block."""
    rows = golden_rows()
    tex = write_latex_summary(tmp_path, rows, title="Sweep of the fixed rows")
    pdf = compile_pdf(tex)
    tools = require_latex()
    text = subprocess.run(
        [tools["pdftotext"], "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    ok = [r for r in rows if r["status"] == "ok"]
    names = list(
        dict.fromkeys(m for r in ok for m in r["options"] if r["metrics"].get(m) is not None)
    )
    assert names
    for metric in names:
        assert metric in text
        for row in ok:
            value = row["metrics"].get(metric)
            assert value is None or as_read(value) in text, (metric, row["model"])
    for row in rows:
        assert row["model"] in text, row["model"]  # the escaped name reads as the name
    assert "Protocol: metrics=paper" in text

    dpi = 200
    subprocess.run(
        [
            tools["pdftoppm"],
            "-r",
            str(dpi),
            "-f",
            "1",
            "-l",
            "1",
            "-png",
            str(pdf),
            str(tmp_path / "page"),
        ],
        check=True,
    )
    (png,) = tmp_path.glob("page*.png")
    page = np.asarray(Image.open(png).convert("L"))
    ink = page < 192
    assert ink.any()
    scale = dpi / 72
    boxes = [w for w in words(pdf) if w[0] in {*names[:4], "Model"}]
    assert {w[0] for w in boxes} >= {"Model", *names[:4]}
    for word, x0, y0, x1, y1 in boxes:
        region = ink[
            int(y0 * scale) : int(np.ceil(y1 * scale)) + 1,
            int(x0 * scale) : int(np.ceil(x1 * scale)) + 1,
        ]
        assert region.mean() > 0.05, word  # the word's glyphs are drawn where pdftotext puts it
    margin = int(1.0 * dpi / 2.54)  # inside the 1.5 cm margin, blank paper
    assert not ink[:margin].any() and not ink[:, :margin].any() and not ink[:, -margin:].any()


def unmarked(table: str) -> str:
    """`table` without the bold and the daggers."""
    return re.sub(r"\\textbf\{([^}]*)\}", r"\1", table.replace(r"$^\dagger$", ""))


def test_the_interval_options_and_a_bad_one():
    """Each shown value's interval as `[lo, hi]`, as ± half its width, or not at all (the value
    alone); any other option refused in one line naming it."""
    rows = fixed_rows()
    shown = [
        (r["metrics"][m], r["intervals"][m])
        for r in rows
        if r["status"] == "ok"
        for m in ("fgd", "mjd", "bc")
    ]
    bracket, pm, none = (unmarked(latex_table(rows, o)) for o in ("bracket", "pm", "none"))
    for value, (lo, hi) in shown:
        assert f"{number(value)} {{\\footnotesize [{number(lo)}, {number(hi)}]}}" in bracket
        assert f"{number(value)} {{\\footnotesize $\\pm$\\,{number((hi - lo) / 2)}}}" in pm
    assert bracket.count("\\footnotesize [") == pm.count("$\\pm$\\,") > len(shown)
    assert "\\footnotesize [" not in pm and "\\footnotesize [" not in none
    assert "$\\pm$" not in none.split("\\begin{minipage}")[0]
    with pytest.raises(ConfigError, match=r"report\.latex\.interval: 'square' is not one of"):
        latex_table(rows, "square")


def test_escape_makes_every_special_character_literal(tmp_path):
    name = r"a_b & c % d $ e # f { g } h ~ i ^ j \ k < l > m | n – o ≤ p é"
    tex = escape(name)
    for char in "_&%$#{}":
        assert f"\\{char}" in tex
    assert r"\textbackslash{}" in tex and r"\textasciitilde{}" in tex and "é" not in tex
    body = f"{PREAMBLE}\\begin{{document}}\n{tex}\n\\end{{document}}\n"
    path = tmp_path / "escape.tex"
    path.write_text(body)
    pdf = compile_pdf(path)
    text = subprocess.run(
        [require_latex()["pdftotext"], str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert "a_b & c % d $ e # f { g } h ~ i ^ j \\ k < l > m | n – o ≤ p e" in " ".join(
        text.split()
    )


# ---- the bold and the daggers follow the paired tests ----


def synthetic(values: dict[str, np.ndarray], direction: str = "lower") -> list[dict]:
    """Rows of a sweep in which each model scored metric `v` per sequence as `values` says."""
    rows = []
    for job, (model, per) in enumerate(values.items()):
        rows.append(
            {
                "job": str(job),
                "status": "ok",
                "model": model,
                "dataset": "mini_beat2",
                "preset": "fast",
                "metrics": {"v": float(np.mean(per))},
                "directions": {"v": direction},
                "skipped": {},
                "intervals": {},
                "options": {"v": {}},
                "per_sequence": [{"index": i, "v": float(x)} for i, x in enumerate(per)],
                "config": {"stats": {"confidence": 0.95, "seed": 0, "bootstrap": 200}},
            }
        )
    return rows


def holm_written_out(p: list[float]) -> list[float]:
    """Holm's step-down adjustment: the k-th smallest p times (m − k + 1), made monotone."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adjusted = [0.0] * m
    previous = 0.0
    for k, i in enumerate(order):
        previous = max(previous, min(1.0, (m - k) * p[i]))
        adjusted[i] = previous
    return adjusted


def scipy_holm(values: dict[str, np.ndarray]) -> dict[frozenset, float]:
    """Holm-adjusted two-sided p-values of every pair: scipy's exact paired permutation test (the
    pairs' values swapped within sequences) of the mean difference."""
    pairs = list(combinations(values, 2))
    p = [
        stats.permutation_test(
            (values[a], values[b]),
            lambda x, y: np.mean(x - y),
            permutation_type="samples",
            n_resamples=np.inf,
        ).pvalue
        for a, b in pairs
    ]
    return {frozenset(pair): q for pair, q in zip(pairs, holm_written_out(p))}


def marks_of(table: str) -> dict[str, tuple[bool, bool]]:
    """model → (bold, dagger) of its cell in the table's one metric column."""
    out = {}
    for line in table.splitlines():
        if line.endswith(r"\\") and " & " in line and not line.startswith("Model"):
            name, value = line[: -len(r"\\")].split(" & ")[:2]
            out[name] = (r"\textbf{" in value, r"\dagger" in value)
    return out


@pytest.mark.parametrize("direction", ["lower", "higher"])
def test_bold_where_holm_says_the_best_beats_every_other_row(direction):
    rng = np.random.default_rng(3)
    sign = 1 if direction == "lower" else -1
    values = {
        m: sign * (base + rng.normal(0, 0.01, 8)) for m, base in (("a", 1), ("b", 2), ("c", 3))
    }
    adjusted = scipy_holm(values)
    assert all(adjusted[frozenset(("a", o))] < 0.05 for o in "bc")  # the case is what it says
    marks = marks_of(latex_table(synthetic(values, direction)))
    assert marks == {"a": (True, False), "b": (False, False), "c": (False, False)}


def test_no_bold_and_daggers_where_holm_cannot_tell_the_best_apart():
    rng = np.random.default_rng(4)
    a = 1 + rng.normal(0, 0.3, 8)
    values = {"a": a, "b": a + rng.normal(0.05, 0.3, 8), "c": 5 + rng.normal(0, 0.01, 8)}
    adjusted = scipy_holm(values)
    assert adjusted[frozenset("ab")] >= 0.05 and adjusted[frozenset("ac")] < 0.05
    rows = synthetic(values)
    best = min(values, key=lambda m: rows[list(values).index(m)]["metrics"]["v"])
    assert best == "a"
    assert marks_of(latex_table(rows)) == {
        "a": (False, False),
        "b": (False, True),
        "c": (False, False),
    }


def test_no_bold_where_the_raw_test_passes_but_holm_does_not():
    """Four sequences: the exact sign-flip test's smallest p is 2/16 = 0.125 for every pair, so no
    row is told apart however far apart: no bold, every other row daggered."""
    values = {
        "a": np.array([1.0, 1.1, 0.9, 1.0]),
        "b": np.array([2.0, 2.1, 1.9, 2.0]),
        "c": np.array([3.0, 3.2, 2.9, 3.1]),
    }
    adjusted = scipy_holm(values)
    assert min(adjusted.values()) >= 0.05
    assert marks_of(latex_table(synthetic(values))) == {
        "a": (False, False),
        "b": (False, True),
        "c": (False, True),
    }


# ---- the caption: the protocol from the one source ----


def test_the_caption_states_the_presets_statement_the_data_and_the_body():
    rows = [r for r in fixed_rows() if r["status"] == "ok"]
    text = caption([{**r, "preset": "genea"} for r in rows])
    assert STATEMENTS["genea"].text in text and "49aab47" in text
    assert "GENEALeaderboard/objective_metric" in text
    assert f"{rows[0]['dataset']}'s test split" in text
    hashed = [{**r, "inputs": {"body_model": {"sha256": "ab" * 32}}} for r in rows]
    assert "(SHA-256 abababababababab…)" in caption(hashed)
    recorded = rows[0]["inputs"]["body_model"]["sha256"]
    assert f"of the procedural body (SHA-256 {recorded[:16]}…)" in caption(rows)
    bare = [{k: v for k, v in r.items() if k != "inputs"} for r in rows]
    assert "its SHA-256 not recorded in results.json" in caption(bare)
    assert text.count(". ") == 0 and text.endswith(".")  # one sentence


def test_the_leaderboard_writes_one_table_per_preset(tmp_path):
    rows = [r for r in fixed_rows() if r["status"] == "ok"]
    other = [{**r, "preset": "fast", "run": f"runs/{r['job']}"} for r in rows]
    path = write_latex_leaderboard(tmp_path, [*rows, *other], "none")
    text = path.read_text()
    assert path.name == "leaderboard.tex"
    assert text.count(r"\begin{table}") == 2
    assert "metrics=paper" in text and "metrics=fast" in text
    assert latex_document(rows).count(r"\begin{table}") == 1


def test_footnotes_name_skips_caveats_copied_fields_pins_and_failures():
    """Each reason once, as a lettered footnote marked where it applies."""
    rows = separated()
    rows[0]["caveats"] = {"v": "motionless output: scores well here"}
    rows[0]["model_info"] = {"copied_fields": ["jaw", "trans"]}
    rows[1]["metrics"]["w"] = None
    rows[1]["skipped"] = {"w": "needs audio_100% & more"}
    rows[2]["protocol_mismatch"] = ["speakers all (pinned: 2)"]
    rows.append({"status": "unreadable", "error": "r.json: not JSON", "run": "x", "model": "?"})
    table = latex_table(rows)
    lines = {line.split(" & ")[0]: line for line in table.splitlines() if " & " in line}
    assert lines[r"a\textsuperscript{a}"].count(r"\textsuperscript{b}") == 1  # the caveat
    assert r"--\textsuperscript{c}" in lines["b"]
    assert r"c\textsuperscript{d}" in lines and r"?\textsuperscript{e}" in lines
    notes = table.split(r"\begin{minipage}")[1]
    for letter, text in [
        ("a", "copies jaw, trans from the reference motion"),
        ("b", "caveat: motionless output: scores well here"),
        ("c", r"needs audio\_100\% \& more"),
        ("d", "scored off the preset's pinned data: speakers all (pinned: 2)"),
        ("e", "unreadable: r.json: not JSON"),
    ]:
        assert rf"\textsuperscript{{{letter}}}\,{text}" in notes


def test_leaderboard_rows_whose_config_is_the_short_hash(tmp_path):
    """The leaderboard's rows hold the config hash under `config`: the tables read the config
    back from the run's results.json, and without it still write the table (default split test,
    confidence 0.95, the body model's file unnamed)."""
    rows = [r for r in fixed_rows() if r["status"] == "ok"]
    short = [{**r, "config": "abcdef01", "run": str(tmp_path / r["job"])} for r in rows]
    text = latex_document(short)
    assert "mini\\_beat2's test split" in text and text.count(r"\begin{table}") == 1
    assert latex_table(short).split(r"\midrule")[1] == latex_table(rows).split(r"\midrule")[1]


def test_a_sweep_whose_every_job_failed_compiles_with_its_failures(tmp_path):
    """Every job failed (two datasets, one unreadable file): one table that says so, each failure a
    footnote, and it compiles."""
    rows = [
        {"status": "failed", "model": "a", "dataset": "mini_beat2", "error": "boom"},
        {"status": "failed", "model": "b", "dataset": "beat2", "error": "bang"},
        {"status": "unreadable", "error": "r.json: not JSON", "run": "x", "model": "?"},
    ]
    document = latex_document(rows)
    assert document.count(r"\begin{table}") == 1
    assert "No job of this table has results" in document
    for why in ("boom", "bang", "not JSON"):
        assert why in document
    tex = tmp_path / "summary.tex"
    tex.write_text(document)
    assert compile_pdf(tex).is_file()
