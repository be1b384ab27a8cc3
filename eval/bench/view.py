"""What the HTML view costs on a long report: ``structrag view``'s time and size, and the page in Chromium.

Parses the PDF once (timed apart: it is ``structrag toc``'s cost), writes the view
(payload + page images, timed), and reports the HTML's size and the sidecar
images'.  With Selenium and Debian's ``chromium`` + ``chromium-driver``, it
then opens the view from disk and times open-to-ready and a click on a tree
node to its highlighted box, and with ``--screenshot`` saves a PNG of that
state (the picture in docs/images/).

    python -m eval.bench.view $STRUCTRAG_SHARED_DATA/prospectus-zh/<one>.pdf --out /tmp/view
    python -m eval.bench.view SMA_Solar_Annual_Report_2023.pdf --ignore-outline --out /tmp/view \\
        --screenshot docs/images/view-annual-report.png --select "Organizational structure"

The view itself goes to ``--out`` (never into the repository: the shared data stays outside it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path


def _browser_figures(html: Path, select: str | None, screenshot: Path | None) -> dict:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
    except ImportError:
        return {"browser": "selenium not installed"}
    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not binary or not driver:
        return {"browser": "no chromium / chromedriver"}
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1500,950"):
        opts.add_argument(a)
    d = webdriver.Chrome(service=Service(driver), options=opts)
    try:
        t0 = time.perf_counter()
        d.get(html.resolve().as_uri())
        while d.execute_script("return document.documentElement.dataset.ready") != "1":
            time.sleep(0.01)
        ready = round(time.perf_counter() - t0, 3)
        out: dict = {"browser": d.capabilities.get("browserVersion"), "open_to_ready_s": ready}
        rows = d.find_elements(By.CSS_SELECTOR, "li.node > .row .t")
        out["tree_nodes"] = len(rows)
        pick = next((r for r in rows if select and select in r.text), rows[len(rows) // 2] if rows else None)
        if pick is not None:
            d.execute_script("arguments[0].scrollIntoView({block: 'center'})", pick)
            t0 = time.perf_counter()
            pick.click()
            out["click_to_box_s"] = round(time.perf_counter() - t0, 3)
            out["selected"] = pick.text
            time.sleep(1.5)  # the page image loads and the highlight settles
            d.execute_script("for (const b of document.querySelectorAll('.box.hl')) b.style.animation = 'none'")
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            d.save_screenshot(str(screenshot))
            out["screenshot"] = str(screenshot)
        return out
    finally:
        d.quit()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.view", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pdf")
    ap.add_argument("--out", required=True, help="folder for the view (outside the repository)")
    ap.add_argument("--ignore-outline", action="store_true")
    ap.add_argument("--inline", action="store_true")
    ap.add_argument("--select", default=None, help="the tree node to click (text contained)")
    ap.add_argument("--screenshot", default=None, help="PNG of the view after the click")
    args = ap.parse_args(argv)

    from structrag.pipeline import parse_pdf
    from structrag.view import write_tree_view

    pdf = Path(args.pdf)
    t0 = time.perf_counter()
    parsed = parse_pdf(pdf, outline="ignore" if args.ignore_outline else "auto", progress=False)
    parse_s = time.perf_counter() - t0
    html = Path(args.out) / (pdf.stem + ".html")
    stats = write_tree_view(html, parsed.document, parsed.headings, pdf=pdf, inline=args.inline)
    fig = {
        "document": pdf.name, "pages": parsed.document.page_count, "headings": len(parsed.headings),
        "parse_s": round(parse_s, 2), "view_s": round(stats.total_s, 2), "render_s": round(stats.render_s, 2),
        "html_mb": round(stats.html_bytes / 1e6, 2), "images": stats.images,
        "images_mb": round(stats.image_bytes / 1e6, 1), "inline": args.inline,
        "load_average": [round(x, 1) for x in os.getloadavg()],
    }
    fig.update(_browser_figures(html, args.select, Path(args.screenshot) if args.screenshot else None))
    json.dump(fig, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
