"""`sb report --html`: the static site, opened in headless Chromium (selenium), its DOM checked
and a screenshot taken. Needs the Debian packages chromium and chromium-driver."""

from __future__ import annotations

import pytest

from conftest import REPO
from sb.report.html import build_site
from sb.report.leaderboard import leaderboard
from sb.report.screenshot import browser
from test_report import entry, make_doc, sb

LEADERBOARD = REPO / "leaderboard"


@pytest.fixture(scope="module")
def driver():
    with browser(1200, 900) as chromium:
        yield chromium


@pytest.fixture(scope="module")
def published_site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    build_site(LEADERBOARD, out)
    return out


def open_page(driver, path):
    driver.get(path.resolve().as_uri())
    return driver


def texts(driver, selector: str) -> list[str]:
    from selenium.webdriver.common.by import By
    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, selector)]


def images_loaded(driver) -> list:
    return driver.execute_script(
        "return Array.from(document.images).map(i => [i.id, i.complete && i.naturalWidth > 0])")


def test_leaderboard_page_in_chromium(driver, published_site, tmp_path):
    rows = leaderboard(LEADERBOARD)
    open_page(driver, published_site / "index.html")
    assert driver.title == "scratchbench leaderboard"
    body_rows = texts(driver, "#leaderboard tbody tr")
    assert len(body_rows) == len(rows)
    assert [r.split()[0] for r in body_rows] == [r["model"] for r in rows]
    assert all(ok for _id, ok in images_loaded(driver)), images_loaded(driver)
    assert {i for i, _ in images_loaded(driver)} == {"pass-rate", "task-grid"}
    shot = tmp_path / "leaderboard.png"
    assert driver.save_screenshot(str(shot))
    _assert_not_blank(shot)


def test_model_and_task_pages_in_chromium(driver, published_site):
    from selenium.webdriver.common.by import By
    open_page(driver, published_site / "index.html")
    model_links = [a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "#leaderboard a")]
    task_links = [a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "#task-links a")]
    assert model_links and task_links
    for href in sorted(set(model_links)):
        driver.get(href)
        assert driver.title.startswith("model ")
        assert texts(driver, "#tasks tbody tr") and all(ok for _id, ok in images_loaded(driver))
    driver.get(task_links[0])
    assert driver.title.startswith("task ")
    assert any("failing tests (the signature)" in t for t in texts(driver, "table thead"))


def test_no_evidence_prints_not_measured_never_zero(driver, tmp_path):
    for draw in (1, 2):
        make_doc(tmp_path / "board", "fake-gpu", "g", draw, [entry("alpha", "needs_accelerator")], draws=2)
    build_site(tmp_path / "board", tmp_path / "site")
    open_page(driver, tmp_path / "site" / "index.html")
    (row,) = texts(driver, "#leaderboard tbody tr")
    assert "not measured (2 needs_accelerator)" in row and "0%" not in row
    open_page(driver, tmp_path / "site" / "models" / "fake-gpu.html")
    assert texts(driver, "#tasks tbody tr") == ["alpha laptop not measured (2 needs_accelerator) not measured"]


def test_cli_report_html(tmp_path):
    done = sb("report", "--html", str(tmp_path / "site"), "--leaderboard", str(LEADERBOARD))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("wrote ") and (tmp_path / "site" / "index.html").is_file()


def test_readme_screenshot_exists():
    from PIL import Image
    with Image.open(REPO / "docs" / "leaderboard.png") as image:
        assert image.format == "PNG" and image.width >= 800


def _assert_not_blank(png) -> None:
    from PIL import Image
    with Image.open(png) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 10, "the screenshot is blank"


def test_a_rebuild_removes_pages_of_models_no_longer_published(tmp_path):
    make_doc(tmp_path / "one", "fake-a", "g", 1, [entry("alpha", "passed")])
    make_doc(tmp_path / "two", "fake-b", "h", 1, [entry("beta", "passed")])
    build_site(tmp_path / "one", tmp_path / "site")
    built = build_site(tmp_path / "two", tmp_path / "site")
    assert not (tmp_path / "site" / "models" / "fake-a.html").exists()
    assert sorted(str(p.relative_to(tmp_path / "site")) for p in (tmp_path / "site").rglob("*.*")) == sorted(
        built["pages"] + built["charts"])


def test_a_draw_served_elsewhere_is_named_with_its_host_in_the_browser(driver, tmp_path):
    from test_served import SECRET_URL, served_doc
    served_doc(tmp_path / "board", endpoint=SECRET_URL)
    build_site(tmp_path / "board", tmp_path / "site")
    open_page(driver, tmp_path / "site" / "index.html")
    (row,) = texts(driver, "#leaderboard tbody tr")
    assert row.startswith("gpt-4o @ 127.0.0.1:8080 ")
    assert "s3cret" not in driver.page_source
    from selenium.webdriver.common.by import By
    driver.get(driver.find_element(By.CSS_SELECTOR, "#leaderboard a").get_attribute("href"))
    assert driver.title == "model gpt-4o @ 127.0.0.1:8080" and "s3cret" not in driver.page_source


def test_a_cmd_agent_draw_is_named_as_a_local_agent_command_in_the_browser(driver, tmp_path):
    from test_served import agent_doc
    agent_doc(tmp_path / "board")
    build_site(tmp_path / "board", tmp_path / "site")
    open_page(driver, tmp_path / "site" / "index.html")
    (row,) = texts(driver, "#leaderboard tbody tr")
    assert row.startswith("./my-agent.sh @ local agent command ") and "no cost (no tokens used)" in row
    from selenium.webdriver.common.by import By
    driver.get(driver.find_element(By.CSS_SELECTOR, "#leaderboard a").get_attribute("href"))
    assert driver.title == "model ./my-agent.sh @ local agent command"
