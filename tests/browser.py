"""A real headless Chromium for the HTML view tests (Debian's ``chromium`` + ``chromium-driver``, via Selenium).

``browser_or_skip()`` starts one, or skips the test with the reason (no Selenium,
no Chromium, no driver).  ``.ci/run`` installs both packages; locally:
``apt-get install chromium chromium-driver`` and ``pip install selenium``.
``STRUCTRAG_CHROMIUM`` / ``STRUCTRAG_CHROMEDRIVER`` point at other binaries.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest


def _find(env: str, names: tuple[str, ...]) -> str | None:
    if os.environ.get(env):
        return os.environ[env]
    for n in names:
        found = shutil.which(n)
        if found:
            return found
    return None


def browser_or_skip(download_dir: Path):
    """A headless Chromium driven by Selenium that saves downloads in ``download_dir``."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (pip install 'structrag[test]')")
    binary = _find("STRUCTRAG_CHROMIUM", ("chromium", "chromium-browser", "google-chrome"))
    driver = _find("STRUCTRAG_CHROMEDRIVER", ("chromedriver",))
    if binary is None or driver is None:
        pytest.skip("no Chromium / chromedriver on PATH (apt-get install chromium chromium-driver)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1400,900", "--disable-extensions", "--no-first-run"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # the page's script errors, for js_errors()
    opts.add_experimental_option("prefs", {"download.default_directory": str(download_dir),
                                           "download.prompt_for_download": False})
    try:
        d = webdriver.Chrome(service=Service(driver), options=opts)
    except Exception as exc:  # a browser that cannot start here (no shared memory, wrong driver version)
        pytest.skip(f"Chromium did not start: {str(exc).splitlines()[0]}")
    d.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(download_dir)})
    return d


def wait_for(predicate, timeout: float = 10.0, what: str = "condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = predicate()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def js_errors(driver) -> list[str]:
    """Script errors the page logged since the last call (uncaught exceptions, failed loads)."""
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
