"""Open a built site in headless Chromium (selenium) and screenshot it.

    python -m sb.report.screenshot SITE_DIR OUT.png [--width 1200] [--height 900]

Used by the HTML test (it checks the DOM in a real browser) and to render the README's
docs/leaderboard.png from the published control runs. Chromium is started with a fresh
profile and every background network feature off, so it touches nothing but the files.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run", "--hide-scrollbars",
                  "--force-device-scale-factor=1", "--disable-dev-shm-usage")


def chromium_binary() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    raise RuntimeError("no chromium found (Debian: apt-get install chromium chromium-driver)")


@contextmanager
def browser(width: int = 1200, height: int = 900):
    """A headless Chromium driven by selenium through the system chromedriver, profile in a temp dir."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    driver_path = shutil.which("chromedriver")
    if driver_path is None:
        raise RuntimeError("no chromedriver found (Debian: apt-get install chromium-driver)")
    with tempfile.TemporaryDirectory(prefix="sb-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = chromium_binary()
        for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service(driver_path), options=options)
        try:
            yield driver
        finally:
            driver.quit()


def screenshot(page: Path, out: Path, width: int = 1200, height: int = 900) -> Path:
    """Load `page` (a file) and save a PNG of the viewport, taller if the page is."""
    with browser(width, height) as driver:
        driver.get(Path(page).resolve().as_uri())
        full = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(width, max(height, min(int(full) + 140, 4000)))
        driver.save_screenshot(str(out))
    return Path(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sb.report.screenshot")
    parser.add_argument("site", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--width", type=int, default=1200)
    parser.add_argument("--height", type=int, default=900)
    args = parser.parse_args(argv)
    print(screenshot(args.site / "index.html", args.out, args.width, args.height))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
