#!/usr/bin/env python3
"""Reads the pages of a morning's triage in headless Chromium (Selenium + chromedriver) at a laptop's screen
(1366x768) and at phone width (390x844, mobile emulation), and prints per page and width, as JSON, what a person
sees there, measured in the browser after layout:

- `rates`: every crash-free rate shown as text ("92.10 % (53 of 671 users crashed)"), each with the target words of
  its cell, else of its row (`target`: "▼ below 99.5 % target", "meets target", … or null; a chart's point: its
  chart's "Target: 99.5 %") and whether it is visible;
- `sections`: the issue titles of each section with an id (`crashes`, `non-fatal`, `crashes-24h`, …), top to bottom;
- `trending`: the title of each issue whose row or list item carries a visible trending mark;
- `releases`: the release names of the all-releases table (`table.release-list`), top to bottom;
- `notice`: the catching-up notice's text, or null;
- on an issue page, where the crashed thread's first frame is (`firstFrameTop`, `firstFrameBottom`, the same
  measure as issue_page_layout.py) and the viewport (`innerWidth`, `innerHeight`, `scrollWidth`);
- `violations`: axe-core's findings (the rules of check_pages.py).

Used by the Swift test `MorningRoutineEndToEndTests`; by hand, against a server filled by tools/scenario/morning:
  tools/a11y/morning_pages.py --axe axe.min.js [--cookie name=value] URL...
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_pages import axe, driver, laptop, sign_in  # noqa: E402
from issue_page_layout import MEASURE as FRAME  # noqa: E402

READ = r"""
window.scrollTo(0, 0);
const visible = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
const text = (e) => e.textContent.replace(/\s+/g, ' ').trim();
const rate = /\d+\.\d\d % \(\d+ of \d+ (users|sessions|user-days) crashed\)/;
const out = {rates: [], sections: {}, trending: [], releases: [], notice: null};
// A rate's element is the one whose own text holds it; its target words are in the row, list item, description or
// card around it (a chart's point says it in its own <title>, a chart in its <desc>).
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
while (walker.nextNode()) {
  const found = walker.currentNode.textContent.match(rate);
  if (!found) continue;
  const element = walker.currentNode.parentElement;
  // A chart's points are judged by the chart (its target line, named in its description); a table cell or a
  // description by itself first, then by its row (a day's row says "meets target" in the next cell).
  const boxes = element.closest('svg') ? [element.closest('svg')]
    : [element.closest('td, dd, li, p'), element.closest('tr, li, p')].filter(b => b);
  let words = null, box = element;
  for (const candidate of boxes) {
    box = candidate;
    words = text(candidate).match(/(✓ |▼ )?(meets|below) (the )?(\d+(\.\d+)? % )?target|Target: \d+(\.\d+)? %/);
    if (words) break;
  }
  out.rates.push({rate: found[0], target: words ? words[0] : null, where: box.tagName.toLowerCase(),
                  visible: element.closest('svg') ? true : visible(element)});
}
const title = (row) => { const link = row.querySelector('a[href*="issues/"]'); return link ? text(link) : null; };
for (const section of document.querySelectorAll('section[id]')) {
  out.sections[section.id] = [...section.querySelectorAll('tbody tr')].map(title).filter(t => t);
}
for (const mark of document.querySelectorAll('.is-trending')) {
  if (!visible(mark)) continue;
  const row = mark.closest('tr, li');
  if (row) out.trending.push(title(row));
}
for (const row of document.querySelectorAll('table.release-list tbody tr')) {
  const cell = row.querySelector('th, td');
  if (cell) out.releases.push(text(cell));
}
const notice = document.querySelector('.processing-notice');
if (notice && visible(notice)) out.notice = text(notice);
return out;
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--axe", required=True, help="path of axe.min.js")
    parser.add_argument("--cookie", help="name=value of a cookie to send (a login session)")
    parser.add_argument("urls", nargs="+")
    args = parser.parse_args()
    source = open(args.axe, encoding="utf-8").read()
    out = {}
    desktop, phone = driver(False), driver(True)
    try:
        laptop(desktop)
        for url in args.urls:
            page = {}
            for name, browser in (("desktop", desktop), ("phone", phone)):
                sign_in(browser, url, args.cookie)
                browser.get(url)
                view = browser.execute_script(FRAME)
                view.update(browser.execute_script(READ))
                view["title"] = browser.title
                view["violations"] = axe(browser, source)
                page[name] = view
            out[url] = page
    finally:
        desktop.quit()
        phone.quit()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
