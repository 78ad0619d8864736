"""A real browser (headless Chromium through Selenium) takes a whole participant session of the
study server running under uvicorn: consent, instructions, practice, clips played to their end
(reported to the server, which refuses the answers before) before the questions unlock, ratings
clicked, an attention check, the completion code; the export then equals what was clicked. A
screenshot of a rating page is saved in the test's folder. Once on tiny synthetic clips, once
(`slow`) on `task=render`'s real output.

Needs Debian's `chromium` and `chromium-driver` (.ci/run installs them); skipped with the reason
where they are absent, a failure under CI (`tests.support.requires`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import select

from gesturebench.study.server.app import create_app
from gesturebench.study.server.design import AttentionChecks, EntryLimit, StudyDesign
from gesturebench.study.server.store import plays
from tests.study_support import (
    Session,
    asked_answer,
    exported_as_clicked,
    free_port,
    make_stimuli,
    make_study,
)
from tests.support.chromium import headless_chromium


@contextmanager
def served(manifest, folder) -> Iterator[tuple]:
    """A study of `manifest` (3 clips, a check after 2) running under uvicorn on a free loopback
    port: (study, base URL)."""
    import uvicorn

    links = EntryLimit(allowed=True, limit=100, per_minute=100)  # the test's unsigned ids
    design = StudyDesign(block_size=3, attention=AttentionChecks(after=[2]), unsigned=links)
    study = make_study(manifest, folder, design)
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(study), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield study, f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture
def browser(tmp_path_factory):
    driver = headless_chromium(tmp_path_factory.mktemp("chromium"))
    yield driver
    driver.quit()


def take_session(browser, study, url: str, folder) -> None:
    """One participant's whole session in `browser`, checked against the export."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 30)
    browser.get(f"{url}/?participant_id=browser-1")

    def navigate(button_id: str) -> None:
        """Click and wait for the next page (a busy machine may still show the old one)."""
        from selenium.common.exceptions import WebDriverException

        page = browser.find_element(By.TAG_NAME, "html")
        browser.find_element(By.ID, button_id).click()

        def gone(_) -> bool:
            # the old page's element is stale once the next page loaded; Chromium reports it as
            # stale or, while the old document is being replaced, as a node of no document
            try:
                page.is_enabled()
            except WebDriverException:
                return True
            return False

        wait.until(gone)

    navigate("continue")  # consent
    navigate("continue")  # instructions
    session = Session()
    answers_by_page = [4, 6, 2, 5, 3]
    for page in range(10):
        if "completion code" in browser.page_source:
            break
        action = browser.find_element(By.ID, "answers-form").get_attribute("action")
        action = action.removeprefix(url)
        clip = browser.find_element(By.NAME, "stimulus_a").get_attribute("value")
        # locked until the clip has played
        assert browser.find_element(By.ID, "answers").get_property("disabled")
        assert not browser.find_element(By.CSS_SELECTOR, "input[type=radio]").is_enabled()
        if action == "/item/0":  # the server refuses answers to a clip not reported ended
            assert refused_before_the_end(browser, action, clip) == 409
        for button in browser.find_elements(By.CSS_SELECTOR, "button.play"):
            button.click()
        wait.until(lambda d: not d.find_element(By.ID, "answers").get_property("disabled"))
        assert browser.execute_script("return document.querySelector('video').ended")
        notices = browser.find_elements(By.ID, "notice")
        value = int(asked_answer(notices[0].text)) if notices else answers_by_page[page]
        dimensions = list(
            dict.fromkeys(
                r.get_attribute("name")
                for r in browser.find_elements(By.CSS_SELECTOR, "input[type=radio]")
            )
        )
        for d in dimensions:
            browser.find_element(By.CSS_SELECTOR, f"input[name={d}][value='{value}']").click()
        if action == "/item/0":
            browser.save_screenshot(str(folder / "rating_page.png"))
        navigate("submit")
        session.answers.append((action, [clip], {d: value for d in dimensions}))
    code = browser.find_element(By.TAG_NAME, "p").text
    (participant,) = study.store.participants()
    assert code.endswith(participant.completion_code) and participant.step == "complete"
    assert [a for a, *_ in session.answers] == [
        "/practice",
        "/item/0",
        "/item/1",
        "/item/2",
        "/item/3",
    ]
    assert participant.block[2]["kind"] == "attention"
    exported_as_clicked(study, "browser-1", session)
    assert (folder / "rating_page.png").read_bytes()[:4] == b"\x89PNG"
    with study.store.engine.connect() as conn:
        ended = conn.execute(select(plays.c.position, plays.c.stimulus)).all()
    assert sorted(ended) == [(k, item["a"]) for k, item in enumerate(participant.block)]


def refused_before_the_end(browser, action: str, clip: str) -> int:
    """The status of the page's answers (all 4) posted from the page before its clip ended."""
    names = {
        r.get_attribute("name") for r in browser.find_elements("css selector", "input[type=radio]")
    }
    return browser.execute_async_script(
        """const [action, clip, names, done] = arguments;
        const body = new URLSearchParams({stimulus_a: clip});
        names.forEach(n => body.append(n, "4"));
        fetch(action, {method: "POST", body: body, redirect: "manual"})
          .then(r => done(r.status), e => done(String(e)));""",
        action,
        clip,
        sorted(names),
    )


@pytest.mark.slow  # a real Chromium session
def test_a_browser_session_from_consent_to_completion_code(browser, tmp_path):
    manifest = make_stimuli(tmp_path / "stimuli", ["ground_truth", "a", "b"], ["s00", "s01"])
    with served(manifest, tmp_path / "db") as (study, url):
        take_session(browser, study, url, tmp_path)


@pytest.mark.slow
def test_a_browser_session_on_the_render_tasks_real_clips(browser, rendered_stimuli, tmp_path):
    with served(rendered_stimuli, tmp_path / "db") as (study, url):
        take_session(browser, study, url, tmp_path)
