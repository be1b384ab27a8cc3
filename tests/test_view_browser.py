"""`structrag view` opened in a real headless Chromium (file://, no server): the tree renders, a click on
a node scrolls to its box and highlights it (and a click on a box finds the node), and corrections made
in the page and exported are what `structrag toc --corrections` applies."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from browser import browser_or_skip, js_errors, wait_for
from pdfgen import numbered_report

LOREM_START = "The company reports its results in this section."


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "structrag.cli", *map(str, args)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def view(tmp_path_factory):
    d = tmp_path_factory.mktemp("view")
    pdf = numbered_report(d / "report.pdf", chapters=2, sections=2, subsections=1, with_toc=True)
    html = d / "out" / "report.html"
    r = run("view", pdf, "-o", html)
    assert r.returncode == 0, r.stderr
    return pdf, html


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    downloads = tmp_path_factory.mktemp("downloads")
    d = browser_or_skip(downloads)
    d.downloads = downloads
    yield d
    d.quit()


def open_view(browser, html: Path) -> None:
    browser.get(html.resolve().as_uri())
    wait_for(lambda: browser.execute_script("return document.documentElement.dataset.ready === '1'"),
             what="the view's script")


def row(browser, text: str):
    from selenium.webdriver.common.by import By

    for li in browser.find_elements(By.CSS_SELECTOR, "li.node"):
        if li.find_element(By.CSS_SELECTOR, ":scope > .row .t").text == text:
            return li
    raise AssertionError(f"no tree node {text!r}")


def in_view(browser, elem) -> bool:
    """The element lies inside the visible part of the pages panel."""
    return browser.execute_script(
        "const r = arguments[0].getBoundingClientRect(), p = document.getElementById('pages').getBoundingClientRect();"
        "return r.top >= p.top && r.bottom <= p.bottom && r.height > 0;", elem)


def test_tree_renders_with_levels_and_images(browser, view):
    from selenium.webdriver.common.by import By

    pdf, html = view
    open_view(browser, html)
    nodes = browser.find_elements(By.CSS_SELECTOR, "li.node")
    assert len(nodes) == 10
    first = nodes[0].find_element(By.CSS_SELECTOR, ":scope > .row")
    assert "1 Chapter One" in first.text and "L1" in first.text and "outline" in first.text
    # nesting: a level-3 node sits two lists deep
    deep = row(browser, "1.1.1 Detail 1.1.1 discussion")
    assert browser.execute_script("let n = 0, e = arguments[0]; while ((e = e.parentElement.closest('li.node'))) n++;"
                                  "return n;", deep) == 2
    # hover text carries level, source and score
    assert "source: outline" in deep.find_element(By.CSS_SELECTOR, ".row").get_attribute("title")
    # one box per heading, and the first page's image loaded from the sidecar folder
    assert len(browser.find_elements(By.CSS_SELECTOR, ".box.hbox")) == 10
    wait_for(lambda: browser.execute_script(
        "const i = document.querySelector('.page img'); return i.complete && i.naturalWidth > 0;"),
        what="the first page image")
    assert browser.execute_script("return document.querySelector('.page img').getAttribute('src')") \
        .startswith("report_pages/")
    assert js_errors(browser) == []


def test_click_node_scrolls_to_box_and_back(browser, view):
    from selenium.webdriver.common.by import By

    _, html = view
    open_view(browser, html)
    pages = browser.find_element(By.ID, "pages")
    assert pages.get_property("scrollTop") == 0
    target = row(browser, "2.2.1 Detail 2.2.1 discussion")  # on page 2, out of view at first
    hid = target.get_attribute("data-id")
    box = browser.find_element(By.CSS_SELECTOR, f".box[data-id='{hid}']")
    assert not in_view(browser, box)
    target.find_element(By.CSS_SELECTOR, ".row .t").click()
    wait_for(lambda: in_view(browser, box), what="the box to scroll into view")
    assert pages.get_property("scrollTop") > 0
    assert "hl" in box.get_attribute("class").split()
    assert "sel" in target.get_attribute("class").split()
    # and back: a click on another box selects its node in the tree
    other = row(browser, "2 Chapter Two")
    obox = browser.find_element(By.CSS_SELECTOR, f".box[data-id='{other.get_attribute('data-id')}']")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", obox)
    obox.click()
    wait_for(lambda: "sel" in row(browser, "2 Chapter Two").get_attribute("class").split(), what="the node")
    assert "hl" in obox.get_attribute("class").split() and "hl" not in box.get_attribute("class").split()


def test_filters(browser, view, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    pdf, html = view
    visible = "return [...document.querySelectorAll('li.node')].filter(e => e.offsetParent !== null).length"

    def threshold(value: str) -> None:
        thr = browser.find_element(By.ID, "filter-threshold")
        browser.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))",
                               thr, value)

    open_view(browser, html)
    assert browser.execute_script(visible) == 10
    Select(browser.find_element(By.ID, "filter-source")).select_by_value("outline")
    assert browser.execute_script(visible) == 10
    browser.find_element(By.ID, "filter-low").click()
    threshold("100")
    assert browser.execute_script(visible) == 0  # outline entries are taken as given, never "low"
    # layout-detected headings carry detection scores
    layout = tmp_path / "layout.html"
    assert run("view", pdf, "--ignore-outline", "-o", layout).returncode == 0
    open_view(browser, layout)
    scores = browser.execute_script("return window.structragView.headings().map(h => h.score)")
    assert len(scores) == 10 and all(s is not None for s in scores)
    browser.find_element(By.ID, "filter-low").click()
    threshold(str(max(scores) + 1))
    assert browser.execute_script(visible) == 10
    threshold(str(min(scores)))
    assert browser.execute_script(visible) == 0
    assert browser.find_elements(By.CSS_SELECTOR, ".box.hbox.dim")  # their boxes fade on the pages


def test_corrections_roundtrip_through_toc(browser, view):
    from selenium.webdriver.common.actions.action_builder import ActionBuilder
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    pdf, html = view
    open_view(browser, html)
    # delete a heading, change a level
    row(browser, "1.1.1 Detail 1.1.1 discussion").find_element(By.CSS_SELECTOR, ".row button.del").click()
    Select(row(browser, "1.2 Section 1.2 results").find_element(By.CSS_SELECTOR, ".row select")).select_by_value("3")
    # mark a line as a heading: the first paragraph under "2 Chapter Two", as level 2
    data = browser.execute_script("return JSON.parse(document.getElementById('structrag-data').textContent)")
    chapter = next(h for h in data["headings"] if h["text"] == "2 Chapter Two")
    block = next(b for b in data["blocks"][chapter["page"]]
                 if b[1] > chapter["bbox"][3] and b[4].startswith(LOREM_START[:40]))
    browser.find_element(By.ID, "mark-line").click()
    page = browser.find_elements(By.CSS_SELECTOR, ".page")[chapter["page"]]
    w, h = data["docs"]["report.pdf"]["sizes"][chapter["page"]]
    cx, cy = (block[0] + block[2]) / 2 / w, (block[1] + block[3]) / 2 / h  # the block's centre, page fractions
    # scroll the line to the middle of the panel, then click it where the user would (viewport pixels)
    x, y = browser.execute_script(
        "const pg = arguments[0], pan = document.getElementById('pages');"
        "pan.scrollTop += pg.getBoundingClientRect().top + arguments[2] * pg.clientHeight"
        "                 - pan.getBoundingClientRect().top - pan.clientHeight / 2;"
        "const r = pg.getBoundingClientRect();"
        "return [r.left + arguments[1] * r.width, r.top + arguments[2] * r.height];",
        page, cx, cy)
    click = ActionBuilder(browser)
    click.pointer_action.move_to_location(int(x), int(y))
    click.pointer_action.click()
    click.perform()
    picker = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, ".picker .pick-level[data-level='2']"),
                      what="the level picker")
    picker[0].click()
    browser.find_element(By.ID, "mark-line").click()
    assert row(browser, block[4]).find_element(By.CSS_SELECTOR, ".lv").text == "L2"

    # Export downloads the file
    browser.find_element(By.ID, "export").click()
    out = browser.downloads / "report.corrections.json"
    wait_for(lambda: out.is_file() and out.stat().st_size > 0, what="the downloaded corrections file")
    exported = json.loads(wait_for(lambda: out.read_text(encoding="utf-8") if out.read_text(encoding="utf-8")
                                   .rstrip().endswith("}") else None, what="a complete file"))
    assert exported["format"] == "structrag-corrections" and exported["schema_version"] == "1.0"
    assert [(c["op"], c["text"][:20], c.get("level")) for c in exported["corrections"]] == [
        ("delete", "1.1.1 Detail 1.1.1 d", None), ("level", "1.2 Section 1.2 resu", 3),
        ("add", LOREM_START[:20], 2)]

    # toc applies it and gives the tree the page showed
    r = run("toc", pdf, "--corrections", out)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()[1:]
    assert lines[:8] == [
        "1 Chapter One  (p. 1)",
        "  1.1 Section 1.1 results  (p. 1)",
        "    1.2 Section 1.2 results  (p. 1)",
        "    1.2.1 Detail 1.2.1 discussion  (p. 1)",
        "2 Chapter Two  (p. 2)",
        f"  {block[4][:40]}" + lines[5][len(block[4][:40]) + 2:],
        "  2.1 Section 2.1 results  (p. 2)",
        "    2.1.1 Detail 2.1.1 discussion  (p. 2)",
    ]
    assert lines[5].endswith("(p. 2)") and lines[5].strip().startswith(LOREM_START)
    js = json.loads(run("toc", pdf, "--corrections", out, "--json").stdout)
    # the view carries lines cut at 80 characters; the file reads the marked line whole from the PDF
    assert [(h["text"][:80], h["level"]) for h in js["headings"]] == \
        [(h["text"], h["level"]) for h in exported["headings"]]
    assert [h["source"] for h in js["headings"]].count("manual") == 1
    assert js_errors(browser) == []
