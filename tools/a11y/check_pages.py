#!/usr/bin/env python3
"""Opens dashboard pages in headless Chromium (Selenium + chromedriver) and reports, per page, as JSON:

- the axe-core accessibility violations (WCAG 2.0/2.1 A and AA, best practices), at desktop and at phone width;
- at phone width (390x844, mobile emulation): whether the page scrolls sideways (document wider than the
  viewport: only a table inside its own scroll box may be wider), the smallest computed font size of text,
  and a screenshot (its path and size).

With `--fill ID=TEXT` and `--click SELECTOR`, each page's form is filled and submitted first, and the page the
form answers is the one checked (a dry run's answer, say).

Used by the Swift test `AccessibilityEndToEndTests`; run by hand as
  tools/a11y/check_pages.py --axe axe.min.js --shots /tmp/shots URL...
tools/test installs chromium, chromium-driver, selenium, and axe-core 4.10 (from the axe-selenium-python 3.0.0
wheel, see shared testing recipes) and exports FAULTLINE_AXE_JS.
"""
import argparse
import json
import os
import sys

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

RULES = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]

# Text nodes' smallest font size, and whether the page (not a scroll box inside it) is wider than the viewport.
MEASURE = """
const doc = document.documentElement;
let smallest = 1000;
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
while (walker.nextNode()) {
  const node = walker.currentNode;
  if (!node.textContent.trim()) continue;
  const element = node.parentElement;
  const style = getComputedStyle(element);
  if (style.display === 'none' || style.visibility === 'hidden') continue;
  const rect = element.getBoundingClientRect();
  if (rect.width <= 1 && rect.height <= 1) continue;  // visually hidden text for screen readers
  smallest = Math.min(smallest, parseFloat(style.fontSize));
}
// What sticks out past the viewport (outside a scroll box of its own), to say what to fix.
const wide = [];
for (const element of document.body.querySelectorAll('*')) {
  if (wide.length >= 5) break;
  const rect = element.getBoundingClientRect();
  if (rect.right <= window.innerWidth + 1) continue;
  // Inside a scroll box is fine, unless it is positioned out of it (an absolute element whose containing block is
  // outside the box widens the page however it is clipped).
  let boxed = false;
  const positioned = ['absolute', 'fixed'].includes(getComputedStyle(element).position);
  for (let up = element.parentElement; up && up !== document.body; up = up.parentElement) {
    const style = getComputedStyle(up);
    if (positioned && style.position === 'static') continue;
    if (style.overflowX !== 'visible') { boxed = true; break; }
    if (positioned) break;
  }
  if (boxed) continue;
  wide.push(element.tagName.toLowerCase() + (element.className ? '.' + String(element.className).split(' ').join('.') : '')
            + ' ' + Math.round(rect.right) + 'px');
}
return {scrollWidth: doc.scrollWidth, innerWidth: window.innerWidth, clientWidth: doc.clientWidth,
        smallestFontPx: smallest, tooWide: wide};
"""


def driver(phone):
    options = Options()
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]:
        options.add_argument(flag)
    if phone:
        options.add_experimental_option(
            "mobileEmulation", {"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 2, "mobile": True}})
    else:
        options.add_argument("--window-size=1280,900")
    return webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))


def laptop(browser):
    """Makes the viewport (not the window) of a desktop `driver` a laptop's 1366x768."""
    size = browser.execute_script("return [window.outerWidth - window.innerWidth,"
                                  " window.outerHeight - window.innerHeight]")
    browser.set_window_size(1366 + size[0], 768 + size[1])


def sign_in(browser, url, cookie):
    """Sets `cookie` (`name=value`, a login session) for the server of `url`; nothing when `cookie` is None."""
    if not cookie:
        return
    browser.get(url.split("/", 3)[0] + "//" + url.split("/", 3)[2] + "/healthz")
    cookie_name, cookie_value = cookie.split("=", 1)
    browser.add_cookie({"name": cookie_name, "value": cookie_value, "path": "/"})


def submit(browser, fill, click):
    """Types `fill` (`ID=TEXT`) into its field, clicks `click` (a CSS selector) and waits for the answer's page."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    if fill:
        field_id, text = fill.split("=", 1)
        field = browser.find_element(By.ID, field_id)
        field.clear()
        field.send_keys(text)
    if click:
        old = browser.find_element(By.TAG_NAME, "html")
        browser.find_element(By.CSS_SELECTOR, click).click()
        WebDriverWait(browser, 30).until(lambda b: b.find_element(By.TAG_NAME, "html") != old
                                         and b.execute_script("return document.readyState") == "complete")


def axe(browser, source):
    browser.execute_script(source)
    result = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {runOnly: %s}).then(r => done(r.violations)).catch(e => done([{id: 'axe-error', help: String(e), nodes: []}]));"
        % json.dumps(RULES))
    return [{"id": v["id"], "impact": v.get("impact"), "help": v.get("help"),
             "nodes": [n.get("target") for n in v.get("nodes", [])][:5]} for v in result]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--axe", required=True, help="path of axe.min.js")
    parser.add_argument("--shots", required=True, help="folder for the phone-width screenshots")
    parser.add_argument("--cookie", help="name=value of a cookie to send (a login session)")
    parser.add_argument("--fill", help="ID=TEXT: text typed into the field of that id before --click")
    parser.add_argument("--click", help="CSS selector of a submit button to click; the answer is checked")
    parser.add_argument("urls", nargs="+")
    args = parser.parse_args()
    source = open(args.axe, encoding="utf-8").read()
    out = {}
    desktop, phone = driver(False), driver(True)
    try:
        for index, url in enumerate(args.urls):
            page = {}
            for name, browser in (("desktop", desktop), ("phone", phone)):
                sign_in(browser, url, args.cookie)
                browser.get(url)
                submit(browser, args.fill, args.click)
                page[name] = {"title": browser.title, "violations": axe(browser, source)}
                if name == "phone":
                    page[name].update(browser.execute_script(MEASURE))
                    shot = os.path.join(args.shots, "page-%d.png" % index)
                    browser.save_screenshot(shot)
                    page[name]["screenshot"] = shot
                    page[name]["screenshotBytes"] = os.path.getsize(shot)
            out[url] = page
    finally:
        desktop.quit()
        phone.quit()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
