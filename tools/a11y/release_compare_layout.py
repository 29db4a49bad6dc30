#!/usr/bin/env python3
"""Measures the releases page's comparison (`section#compare`) in headless Chromium (Selenium + chromedriver) at a
laptop's screen (1366x768) and at phone width (390x844, mobile emulation), and prints per width, as JSON:

- each release card (`.release-card`): its release name, bounding box in CSS px from the top left of the page, and
  the text of its target marks (`.target-mark`);
- the viewport (`innerWidth`) and the page's width (`scrollWidth`: wider than the viewport means it scrolls sideways);
- the axe-core violations (the rules check_pages.py runs).

Used by the Swift test `ReleaseComparisonEndToEndTests`; by hand:
  tools/a11y/release_compare_layout.py --axe axe.min.js [--cookie name=value] URL
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_pages import axe  # noqa: E402  (the same axe run and rules as every other page)

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

MEASURE = """
window.scrollTo(0, 0);
const cards = [];
for (const card of document.querySelectorAll('section#compare .release-card')) {
  const box = card.getBoundingClientRect();
  cards.push({release: card.querySelector('h3').textContent.trim(),
              left: Math.round(box.left + window.scrollX), top: Math.round(box.top + window.scrollY),
              width: Math.round(box.width), height: Math.round(box.height),
              marks: Array.from(card.querySelectorAll('.target-mark'), m => m.textContent.trim())});
}
return {cards: cards, innerWidth: window.innerWidth, scrollWidth: document.documentElement.scrollWidth};
"""


def driver(phone):
    options = Options()
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]:
        options.add_argument(flag)
    if phone:
        options.add_experimental_option(
            "mobileEmulation", {"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 2, "mobile": True}})
    else:
        options.add_argument("--window-size=1366,768")
    return webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--axe", required=True, help="path of axe.min.js")
    parser.add_argument("--cookie", help="name=value of a cookie to send (a login session)")
    parser.add_argument("url")
    args = parser.parse_args()
    source = open(args.axe, encoding="utf-8").read()
    out = {}
    for name, phone in (("desktop", False), ("phone", True)):
        browser = driver(phone)
        try:
            if not phone:
                size = browser.execute_script("return [window.outerWidth - window.innerWidth,"
                                              " window.outerHeight - window.innerHeight]")
                browser.set_window_size(1366 + size[0], 768 + size[1])
            if args.cookie:
                browser.get(args.url.split("/", 3)[0] + "//" + args.url.split("/", 3)[2] + "/healthz")
                cookie_name, cookie_value = args.cookie.split("=", 1)
                browser.add_cookie({"name": cookie_name, "value": cookie_value, "path": "/"})
            browser.get(args.url)
            view = browser.execute_script(MEASURE)
            view["violations"] = axe(browser, source)
            out[name] = view
        finally:
            browser.quit()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
