"""report.html (`reporting/report.py`) of a real two-model sweep on mini-BEAT2 (4 sequences, the
first 2 rendered as clips), run in this process: its content against results.json,
per_sequence.csv, comparisons.csv and .hydra/overrides.yaml read independently, and the page in
headless Chromium (every request inside the page's folder, every image and video loaded, a
screenshot of the table)."""

from __future__ import annotations

import base64
import copy
import io
import json
import shlex
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
import yaml

from gesturebench.reporting.comparability import mixed_conventions
from gesturebench.reporting.report import REPORT_FILE, write_run_report, write_sweep_report
from gesturebench.reporting.summary import collect_jobs
from tests.launch import isolated, run

pytestmark = pytest.mark.slow

#: mini-BEAT2's test split holds 4 sequences; 2 rendered: the 3 worst of 4 always include a
#: rendered one and one that is not
SEQUENCES, CLIPS = 4, 2


class Node:
    def __init__(self, tag: str, attrs: dict, parent: Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node] = []
        self.text_parts: list[str] = []

    @property
    def text(self) -> str:
        return "".join(self.text_parts) + "".join(c.text for c in self.children)

    def all(self, tag: str | None = None, **attrs: str) -> list[Node]:
        found = []
        for child in self.children:
            if (tag is None or child.tag == tag) and all(
                child.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items()
            ):
                found.append(child)
            found += child.all(tag, **attrs)
        return found


#: the tags without an end tag
VOID = frozenset({"meta", "img", "br", "link", "source", "input"})


class Tree(HTMLParser):
    """The page as a tree of `Node`s (the standard library's parser; void tags closed at once)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.root = self.current = Node("document", {}, None)
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {k: v or "" for k, v in attrs}, self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_endtag(self, tag):
        node = self.current
        while node.parent is not None and node.tag != tag:
            node = node.parent
        if node.parent is not None:
            self.current = node.parent

    def handle_data(self, data):
        self.current.text_parts.append(data)


def page(path: Path) -> Node:
    return Tree(path.read_text()).root


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> dict:
    """A sweep of `model=perturbed` at two levels, `metrics=fast`, 4 sequences, 2 clips of 1 s at
    32 px per job, then each job's report.html and the sweep's (in its own folder)."""
    folder = tmp_path_factory.mktemp("report") / "sweep"
    with isolated():
        code = run(
            "-m",
            "model=perturbed",
            "model.level=0.05,0.4",
            "metrics=fast",
            f"dataset.max_sequences={SEQUENCES}",
            f"task.render_clips={CLIPS}",
            "task.render_seconds=1",
            "task.camera.size=32",
            "threads=1",
            "logger=none",
            f"hydra.sweep.dir={folder}",
            encoders=False,
        )
    assert code in (0, None)
    jobs = sorted(p for p in folder.iterdir() if (p / "results.json").is_file())
    assert len(jobs) == 2
    sweep_id = json.loads((jobs[0] / "results.json").read_text())["sweep_id"]
    rows = collect_jobs(folder, sweep_id)
    (own,) = (folder / "sweeps").iterdir()
    runs = {job: write_run_report(job, results_of(job)) for job in jobs}
    report = write_sweep_report(own, rows)
    assert report == own / REPORT_FILE and all(p == j / REPORT_FILE for j, p in runs.items())
    return {"folder": folder, "jobs": jobs, "rows": rows, "own": own, "runs": runs, "sweep": report}


def results_of(job: Path) -> dict:
    return json.loads((job / "results.json").read_text())


def value_cells(root: Node) -> dict[tuple[str, str], Node]:
    """The headline table's cells by (model, metric)."""
    (table,) = root.all("table", id="headline-table")
    return {(c.attrs["data-model"], c.attrs["data-metric"]): c for c in table.all("td")}


def footnote(root: Node, cell: Node) -> list[str]:
    """The texts of the footnotes `cell` links to."""
    notes = []
    for link in cell.all("a"):
        (item,) = root.all("li", id=link.attrs["href"].lstrip("#"))
        notes.append(item.text)
    return notes


def test_the_headline_table_holds_results_json_values_and_intervals(sweep):
    """Each run's page and the sweep's: one cell per configured metric with a value (metrics=fast:
    mjd and pck; div_sample has none with one sample) per run, its exact value, 4 significant
    digits and its interval as results.json records them."""
    for job in sweep["jobs"]:
        doc = results_of(job)
        for report in (sweep["runs"][job], sweep["sweep"]):
            cells = value_cells(page(report))
            mine = {m: c for (model, m), c in cells.items() if model == doc["model"]}
            assert set(mine) == {"mjd", "pck"}
            for metric, cell in mine.items():
                value, (lo, hi) = doc["metrics"][metric], doc["intervals"][metric]
                assert float(cell.attrs["data-value"]) == value
                assert cell.text == f"{value:.4g}[{lo:.4g}, {hi:.4g}]"


def test_a_skipped_metric_shows_its_reason_and_a_caveat_its_text(sweep, tmp_path):
    job = sweep["jobs"][0]
    doc = copy.deepcopy(results_of(job))
    doc["metrics"]["pck"] = None
    doc["skipped"]["pck"] = "needs the reference's contacts, which this dataset lacks"
    doc["caveats"]["mjd"] = "a motionless output scores well on it"
    root = page(write_run_report(job, doc, into=tmp_path))
    cells = value_cells(root)
    pck, mjd = cells[(doc["model"], "pck")], cells[(doc["model"], "mjd")]
    assert "data-value" not in pck.attrs and pck.text.startswith("–")
    assert footnote(root, pck) == [doc["skipped"]["pck"]]
    assert footnote(root, mjd) == [f"caveat: {doc['caveats']['mjd']}"]


def test_provenance_shows_the_hashes_versions_and_reproducing_command(sweep, tmp_path):
    """The config hash and every input hash results.json records (here a run that also records
    an encoder checkpoint, released weights and its input files), each package version, and the
    command: `python launch.py` with the overrides Hydra recorded in the run folder."""
    job = sweep["jobs"][0]
    doc = copy.deepcopy(results_of(job))
    doc["encoders"] = {"fgd": {"checkpoint": "motion_ae.pt", "sha256": "e" * 64}}
    doc["model_info"] = {**doc["model_info"], "weights_sha256": "f" * 64}
    doc["inputs"] = {
        "dataset": {"root": "/data/beat2", "files": {"smplxflame_30/a.npz": "a" * 64}},
        "body_model": {"path": "/m/SMPLX_NEUTRAL_2020.npz", "sha256": "b" * 64},
    }
    root = page(write_run_report(job, doc, into=tmp_path))
    (table,) = root.all("table", **{"class": "provenance"})
    shown = {row.all("th")[0].text: row.all("td")[0].text for row in table.all("tr")}
    assert shown["config_hash"] == doc["config_hash"]
    assert shown["encoders.fgd.sha256"] == "e" * 64
    assert shown["model_info.weights_sha256"] == "f" * 64
    assert shown["dataset root"] == "/data/beat2"
    (files,) = root.all("table", **{"class": "inputs"})
    assert {r.all("th")[0].text: r.all("td")[0].text for r in files.all("tr")} == {
        "smplxflame_30/a.npz": "a" * 64
    }
    assert shown["body model file /m/SMPLX_NEUTRAL_2020.npz"] == "b" * 64
    text = root.text
    for package, version in doc["versions"].items():
        assert f"{package}{version}" in text
    overrides = yaml.safe_load((job / ".hydra" / "overrides.yaml").read_text())
    commands = [shlex.split(p.text) for p in root.all("pre")]
    assert ["python", "launch.py", *overrides] in commands
    assert ["python", "launch.py", "task=verify", f"task.run={job}"] in commands
    # the real run's page: every dataset file it records
    (files,) = page(sweep["runs"][job]).all("table", **{"class": "inputs"})
    recorded = results_of(job)["inputs"]["dataset"]["files"]
    assert {r.all("th")[0].text: r.all("td")[0].text for r in files.all("tr")} == recorded
    assert len(recorded) == 1 + 4 * SEQUENCES  # the split file; motion, audio, TextGrid, sem
    # a results.json that records no input says so rather than show none silently
    del doc["inputs"], doc["encoders"], doc["model_info"]["weights_sha256"]
    bare = page(write_run_report(job, doc, into=tmp_path))
    assert "none recorded in results.json beyond the config hash" in bare.text


def test_a_report_written_into_the_staging_folder_commits_with_the_run(sweep, tmp_path):
    """What `task=evaluate` does with it: results, clips and report.html staged together
    (`runtime.commit.staged`, the report's clips found in the staging folder); once committed, the
    report is listed in the run's manifest and its clips resolve beside it."""
    from gesturebench.reporting.results import stage_results
    from gesturebench.runtime.commit import listed, staged

    job = sweep["jobs"][0]
    run_dir = tmp_path / "run"
    shutil.copytree(job / ".hydra", run_dir / ".hydra")
    doc = results_of(job)
    with staged(run_dir) as stage:
        stage_results(stage, doc)
        shutil.copytree(job / "clips", stage / "clips")
        assert write_run_report(run_dir, doc, into=stage) == stage / REPORT_FILE
    assert REPORT_FILE in (listed(run_dir) or {})
    root = page(run_dir / REPORT_FILE)
    sources = [v.attrs["src"] for v in root.all("video")]
    assert sources and all((run_dir / s).is_file() for s in sources)
    overrides = yaml.safe_load((job / ".hydra" / "overrides.yaml").read_text())
    assert ["python", "launch.py", *overrides] in [shlex.split(p.text) for p in root.all("pre")]


def worst_expected(job: Path, metric: str, direction: str) -> list[tuple[str, float]]:
    """The 3 worst (sequence id, value) of per_sequence.csv, read with pandas."""
    table = pd.read_csv(job / "per_sequence.csv", dtype={"sequence_id": str})
    ascending = direction == "higher"  # the worst of a higher-is-better metric is its lowest
    rows = table.sort_values(metric, ascending=ascending).head(3)
    return list(zip(rows.sequence_id, rows[metric], strict=True))


def test_worst_sequences_with_the_rendered_clip_or_the_command_that_renders_it(sweep):
    for job in sweep["jobs"]:
        doc = results_of(job)
        rendered = {p.stem for p in (job / "clips").glob("*.mp4")}
        assert len(rendered) == CLIPS
        for report, sweep_page in ((sweep["runs"][job], False), (sweep["sweep"], True)):
            root = page(report)
            videos = notes = 0
            for metric in ("mjd", "pck"):
                rows = [
                    r
                    for r in root.all("tr", data_metric=metric)
                    if r.all("td")[0].text == doc["model"]
                ]
                expected = worst_expected(job, metric, doc["directions"][metric])
                assert [(r.all("td")[1].text, r.all("td")[2].text) for r in rows] == [
                    (s, f"{v:.4g}") for s, v in expected
                ]
                for row, (seq, _) in zip(rows, expected, strict=True):
                    (video,) = row.all("video") or [None]
                    if seq in rendered:
                        videos += 1
                        path = report.parent / video.attrs["src"].replace("%3D", "=")
                        assert path.read_bytes() == (job / "clips" / f"{seq}.mp4").read_bytes()
                        assert not video.attrs["src"].startswith(("/", ".."))
                        if sweep_page:
                            assert video.attrs["src"].startswith("clips/job")
                    else:
                        notes += 1
                        assert video is None
                        index = doc["per_sequence"][
                            [r["sequence_id"] for r in doc["per_sequence"]].index(seq)
                        ]["index"]
                        assert f"task.render_clips={index + 1}" in row.text
            assert videos and notes  # 3 worst of 4 sequences, 2 of them rendered


def test_one_plot_per_metric_with_each_run(sweep):
    from PIL import Image

    for report, runs in [*((r, 1) for r in sweep["runs"].values()), (sweep["sweep"], 2)]:
        images = page(report).all("img")
        assert [i.attrs["data-metric"] for i in images] == ["mjd", "pck"]
        for image in images:
            head, data = image.attrs["src"].split(",", 1)
            assert head == "data:image/png;base64"
            png = Image.open(io.BytesIO(base64.b64decode(data)))
            assert png.width > 200 and png.height > 100
            assert image.attrs["alt"].count("perturbed_") == runs


def test_comparisons_in_words_follow_comparisons_csv(sweep):
    """One sentence per pair and ranked metric, its numbers those of the sweep's comparisons.csv
    and its verdict the Holm-corrected p against 1 − confidence (4 sequences: the sign-flip test
    cannot go below 2/16, so the page says so)."""
    table = pd.read_csv(sweep["folder"] / "comparisons.csv")
    root = page(sweep["sweep"])
    sentences = [li.text for ul in root.all("ul", **{"class": "pairs"}) for li in ul.all("li")]
    ranked = table[table.metric.isin(["mjd", "pck"])]
    assert len(sentences) == len(ranked) == 2
    for pair, sentence in zip(ranked.itertuples(), sentences, strict=True):
        assert f"= {pair.difference:.4g} [{pair.lo:.4g}, {pair.hi:.4g}]" in sentence
        assert f"over {pair.sequences} sequences" in sentence
        assert pair.p_holm >= 0.05 and "not told apart at 95%" in sentence
        assert f"smallest attainable p here, {2 / 16:.2g}, is not below 0.05" in sentence
    # a run's own page has no comparisons
    assert not page(next(iter(sweep["runs"].values()))).all("h2", id="comparisons")


def test_comparability_warnings_are_those_of_the_rows(sweep, tmp_path):
    rows = copy.deepcopy(sweep["rows"])
    assert "None: the runs used the same" in page(sweep["sweep"]).text
    rows[1]["preset"] = "paper"
    rows[1]["options"]["pck"] = {"threshold": 0.2}
    rows[0]["protocol_mismatch"] = ["split"]
    expected = mixed_conventions(rows).warnings
    assert len(expected) == 3
    root = page(write_sweep_report(tmp_path, rows, jobs_dir=sweep["folder"]))
    shown = [d.text for d in root.all("div", **{"class": "warning"})]
    assert shown == expected


def test_a_failed_job_has_its_error_and_no_values(sweep, tmp_path):
    rows = [*sweep["rows"], {"job": "x", "status": "failed", "error": "ValueError: boom"}]
    root = page(write_sweep_report(tmp_path, rows, jobs_dir=sweep["folder"]))
    cells = value_cells(root)
    assert {m for (model, m) in cells if model == "x"} == {"mjd", "pck"}
    assert all("data-value" not in c.attrs for (model, _), c in cells.items() if model == "x")
    (head,) = [th for th in root.all("th") if th.attrs.get("data-model") == "x"]
    assert footnote(root, head) == ["x failed: ValueError: boom"]


#: the page's media ready, or failed: every image complete, every video with its metadata or an
#: error
MEDIA_SETTLED = """
return Array.from(document.images).every(i => i.complete)
    && Array.from(document.querySelectorAll('video')).every(v => v.readyState >= 1 || v.error);
"""
#: every URL the page names (resolved by the browser): src, href, poster
PAGE_URLS = """
return Array.from(document.querySelectorAll('[src],[href],[poster]')).flatMap(e =>
    ['src', 'href', 'poster'].filter(a => e.hasAttribute(a)).map(a => e[a] || e.getAttribute(a)));
"""
MEDIA = """
return {
    images: Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight]),
    videos: Array.from(document.querySelectorAll('video')).map(
        v => [v.readyState, v.error && v.error.code, v.duration, v.videoWidth]),
};
"""


def inside(url: str, folder: Path) -> bool:
    """Whether `url` is a data: URI or a file inside `folder` (no other scheme, no host)."""
    from urllib.parse import unquote, urlsplit

    if url.startswith("data:"):
        return True
    parts = urlsplit(url)
    if parts.scheme != "file" or parts.netloc:
        return False
    return Path(unquote(parts.path)).resolve().is_relative_to(folder.resolve())


def requested(driver) -> list[str]:
    """The URLs the browser requested since the last call (DevTools network events)."""
    events = [json.loads(e["message"])["message"] for e in driver.get_log("performance")]
    return [
        e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"
    ]


@pytest.fixture
def chromium(tmp_path):
    from tests.support.chromium import headless_chromium

    driver = headless_chromium(tmp_path / "profile", performance_log=True)
    yield driver
    driver.quit()


def test_the_pages_load_in_chromium_from_their_folder_with_every_image_and_video(
    sweep, chromium, tmp_path
):
    """A run's report.html and the sweep's, opened from file://: every request the browser makes
    for the page (DevTools network events) and every URL in its DOM is a data: URI or a file inside
    the page's folder; every image decodes (natural size > 0); every clip (H.264 MP4 with AAC
    audio) loads its metadata without error; the headline table is on screen (screenshot)."""
    from PIL import Image, ImageStat
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    job = sweep["jobs"][0]
    for name, report in (("run", sweep["runs"][job]), ("sweep", sweep["sweep"])):
        chromium.get("about:blank")
        chromium.get_log("performance")  # what the browser loaded before the page: not the page's
        chromium.get(report.as_uri())
        WebDriverWait(chromium, 60).until(lambda d: d.execute_script(MEDIA_SETTLED))
        requests = requested(chromium)
        assert report.as_uri() in requests
        assert any(url.endswith(".mp4") for url in requests)
        assert [u for u in requests if not inside(u, report.parent)] == []
        urls = chromium.execute_script(PAGE_URLS)
        assert urls and [u for u in urls if not inside(u, report.parent)] == []
        media = chromium.execute_script(MEDIA)
        assert len(media["images"]) == 2  # mjd, pck
        assert all(ok and w > 0 and h > 0 for ok, w, h in media["images"])
        assert media["videos"]  # the rendered worst sequences
        for ready, error, duration, width in media["videos"]:
            assert error is None and ready >= 1 and duration > 0 and width == 64  # 2 × 32 px
        table = chromium.find_element(By.ID, "headline-table")
        assert table.is_displayed() and table.location["y"] < 1000  # on the first screen
        shot = Image.open(io.BytesIO(table.screenshot_as_png)).convert("L")
        assert shot.width > 200 and shot.height > 50
        assert ImageStat.Stat(shot).stddev[0] > 10  # text on the background, not a blank box
        doc = results_of(job)
        assert f"{doc['metrics']['mjd']:.4g}" in table.text
        chromium.save_screenshot(str(tmp_path / f"report_{name}.png"))
        page_shot = Image.open(tmp_path / f"report_{name}.png").convert("L")
        assert ImageStat.Stat(page_shot).stddev[0] > 10
    # the checks see a request leaving the folder: the run's page with a link outside added
    job_report = sweep["runs"][job]
    tampered = job_report.with_name("tampered.html")
    outside = '<img src="../elsewhere.png"><img src="http://127.0.0.1:9/x.png"></body>'
    tampered.write_text(job_report.read_text().replace("</body>", outside))
    chromium.get("about:blank")
    chromium.get_log("performance")
    chromium.get(tampered.as_uri())
    WebDriverWait(chromium, 60).until(lambda d: d.execute_script(MEDIA_SETTLED))
    urls = chromium.execute_script(PAGE_URLS)
    assert [u for u in urls if not inside(u, job)] == [
        (job.parent / "elsewhere.png").as_uri(),
        "http://127.0.0.1:9/x.png",
    ]
    assert "http://127.0.0.1:9/x.png" in requested(chromium)
    media = chromium.execute_script(MEDIA)
    assert [w for _, w, _ in media["images"]][-2:] == [0, 0]
    tampered.unlink()
