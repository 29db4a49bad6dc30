#!/usr/bin/env python3
"""Measures an issue page in headless Chromium (Selenium + chromedriver) at a laptop's screen (1366x768) and at
phone width (390x844, mobile emulation), and prints per width, as JSON:

- where the crashed thread's first frame is (`firstFrameTop`, `firstFrameBottom`: its bounding box in CSS px from
  the top of the page, scrolled to the top): the first frame line, or the summary of a folded run of system frames
  when the thread starts with one;
- the height of each frame line shown (`frameHeights`, in-app frames without their source lines) and of the page;
- the viewport (`innerWidth`, `innerHeight`, `scrollWidth`);
- the axe-core violations (WCAG 2.0/2.1 A and AA, best practices: the rules check_pages.py runs).

Used by the Swift test `IssuePageLayoutEndToEndTests`; by hand:
  tools/a11y/issue_page_layout.py --axe axe.min.js [--cookie name=value] [--shots DIR] URL
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_pages import axe, driver  # noqa: E402  (the same browsers, axe run and rules as every other page)

MEASURE = """
window.scrollTo(0, 0);
const section = document.querySelector('section.thread-crashed') || document.querySelector('section.thread');
const out = {innerWidth: window.innerWidth, innerHeight: window.innerHeight,
             scrollWidth: document.documentElement.scrollWidth,
             pageHeight: document.documentElement.scrollHeight, frameHeights: []};
if (section) {
  const first = section.querySelector('.frames > li > .frame-line, details.frames-folded > summary');
  if (first) {
    const box = first.getBoundingClientRect();
    out.firstFrameTop = box.top + window.scrollY;
    out.firstFrameBottom = box.bottom + window.scrollY;
    out.firstFrameText = first.textContent.trim().slice(0, 120);
  }
  for (const line of section.querySelectorAll('.frames > li > .frame-line')) {
    const box = line.getBoundingClientRect();
    if (box.height > 0) out.frameHeights.push(Math.round(box.height * 10) / 10);
  }
}
return out;
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--axe", required=True, help="path of axe.min.js")
    parser.add_argument("--cookie", help="name=value of a cookie to send (a login session)")
    parser.add_argument("--shots", default=os.environ.get("FAULTLINE_LAYOUT_SHOTS"),
                        help="folder for a screenshot of the first screen at each width (default: $FAULTLINE_LAYOUT_SHOTS)")
    parser.add_argument("url")
    args = parser.parse_args()
    source = open(args.axe, encoding="utf-8").read()
    out = {}
    for name, phone in (("desktop", False), ("phone", True)):
        browser = driver(phone)
        try:
            if not phone:
                # check_pages' desktop window is 1280x900: make the viewport a laptop's 1366x768 exactly.
                size = browser.execute_script("return [window.outerWidth - window.innerWidth,"
                                              " window.outerHeight - window.innerHeight]")
                browser.set_window_size(1366 + size[0], 768 + size[1])
            if args.cookie:
                browser.get(args.url.split("/", 3)[0] + "//" + args.url.split("/", 3)[2] + "/healthz")
                cookie_name, cookie_value = args.cookie.split("=", 1)
                browser.add_cookie({"name": cookie_name, "value": cookie_value, "path": "/"})
            browser.get(args.url)
            view = browser.execute_script(MEASURE)
            view["title"] = browser.title
            view["violations"] = axe(browser, source)
            if args.shots:
                view["screenshot"] = os.path.join(args.shots, "issue-%s.png" % name)
                browser.save_screenshot(view["screenshot"])
            out[name] = view
        finally:
            browser.quit()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
