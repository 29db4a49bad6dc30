#!/usr/bin/env python3
"""Measures dashboard pages in headless Chromium (Selenium + chromedriver) at a laptop's screen (1366x768) and at
phone width (390x844, mobile emulation), and prints per page and width, as JSON:

- the viewport (`innerWidth`) and the page's width (`scrollWidth`: wider than the viewport means it scrolls
  sideways);
- `rows`: the first rows of every list (`table.rows-stack`), each cell named by its column's header (`header`: the
  row's own header cell, its title), with the label drawn before it (`label`: its `::before` text, empty when
  none), its text, its box in CSS px from the top left of the viewport (the page scrolled to the row), and
  `clipped` when the list's scroll box hides part of it;
- `cutTables`: every table box (`.table-wrap`) that is wider inside than it shows, with whether it has a visible
  hint that it scrolls (a background image: the shadows of the stylesheet);
- `chartTextPx`: the smallest size at which chart text (`svg.chart text`) is drawn on screen: its font size in
  viewBox units times the SVG's scale (a computed font size alone would miss the scaling);
- the axe-core violations (the rules check_pages.py runs).

Used by the Swift test `PhoneLayoutEndToEndTests`; by hand:
  tools/a11y/phone_layout.py --axe axe.min.js [--cookie name=value] URL...
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_pages import axe, driver, laptop, sign_in  # noqa: E402  (the same browsers, axe run and rules)

MEASURE = """
const rows = [];
for (const table of document.querySelectorAll('table.rows-stack')) {
  const headers = Array.from(table.querySelectorAll('thead th'), th => th.textContent.trim());
  const wrap = table.closest('.table-wrap');
  for (const row of Array.from(table.querySelectorAll('tbody tr')).slice(0, 5)) {
    row.scrollIntoView({block: 'center'});
    const clip = wrap ? wrap.getBoundingClientRect() : null;
    const cells = Array.from(row.children, (cell, index) => {
      const box = cell.getBoundingClientRect();
      const before = getComputedStyle(cell, '::before').content;
      return {name: headers[index] || '', header: cell.tagName === 'TH',
              label: before.startsWith('"') ? JSON.parse(before) : '', text: cell.textContent.replace(/\\s+/g, ' ').trim().slice(0, 80),
              left: Math.round(box.left), right: Math.round(box.right), top: Math.round(box.top),
              width: Math.round(box.width), height: Math.round(box.height),
              clipped: !!clip && (box.left < clip.left - 1 || box.right > clip.right + 1)};
    });
    rows.push({table: table.className, cells: cells});
  }
}
window.scrollTo(0, 0);
const cutTables = [];
for (const wrap of document.querySelectorAll('.table-wrap')) {
  if (wrap.getClientRects().length === 0) continue;  // not drawn (in a closed <details>)
  if (wrap.scrollWidth <= wrap.clientWidth + 1) continue;
  const caption = wrap.querySelector('caption');
  cutTables.push({caption: caption ? caption.textContent.trim() : '',
                  hint: getComputedStyle(wrap).backgroundImage.includes('gradient')});
}
let chartTextPx = null;
for (const text of document.querySelectorAll('svg.chart text')) {
  const matrix = text.getScreenCTM();
  if (!matrix) continue;
  const px = parseFloat(getComputedStyle(text).fontSize) * Math.hypot(matrix.a, matrix.b);
  chartTextPx = chartTextPx === null ? px : Math.min(chartTextPx, px);
}
return {rows: rows, cutTables: cutTables, chartTextPx: chartTextPx,
        innerWidth: window.innerWidth, scrollWidth: document.documentElement.scrollWidth};
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--axe", required=True, help="path of axe.min.js")
    parser.add_argument("--cookie", help="name=value of a cookie to send (a login session)")
    parser.add_argument("urls", nargs="+")
    args = parser.parse_args()
    source = open(args.axe, encoding="utf-8").read()
    out = {url: {} for url in args.urls}
    for name, phone in (("desktop", False), ("phone", True)):
        browser = driver(phone)
        try:
            if not phone:
                laptop(browser)
            sign_in(browser, args.urls[0], args.cookie)
            for url in args.urls:
                browser.get(url)
                view = browser.execute_script(MEASURE)
                view["title"] = browser.title
                view["violations"] = axe(browser, source)
                out[url][name] = view
        finally:
            browser.quit()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
