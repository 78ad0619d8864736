"""Headless Chromium through Selenium (Debian's `chromium` and `chromium-driver`), as the browser
tests start it: skipped with the reason where absent, a failure under CI
(`tests.support.requires`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.support.requires import require_binary

#: headless, and nothing started beside the page: on a machine without a network Chromium's
#: background connections (updates, sync, QUIC probes) fail, many at a time
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1000,1100",
)


def headless_chromium(profile: Path, performance_log: bool = False) -> Any:
    """A Selenium driver of headless Chromium with its profile in `profile`; `performance_log`:
    the DevTools network events readable with `driver.get_log("performance")`."""
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service

    chromium, chromedriver = require_binary(
        "chromium", "chromedriver", package="chromium chromium-driver"
    )
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    if performance_log:
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    for attempt in range(3):  # a loaded machine can miss chromedriver's start-up deadline
        try:
            driver = webdriver.Chrome(service=Service(chromedriver), options=options)
            break
        except WebDriverException:
            if attempt == 2:
                raise
            time.sleep(2)
    driver.set_script_timeout(60)
    return driver
