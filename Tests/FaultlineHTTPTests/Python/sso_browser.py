#!/usr/bin/env python3
"""Signs in to Faultline through its single sign-on link in headless Chromium (Selenium + chromedriver), as a person
does: Faultline's login page, the link "Sign in with NAME", the provider's own login page, back to Faultline.

    python3 sso_browser.py --start URL --link "Sign in with Test IdP" --user ada --password ...

prints one JSON object: the URL the browser ended on, the page's title and h1, the cookie names Faultline set, and the
steps' URLs. Exits 1 (with the page source on stderr) when a step's element does not appear.
"""
import argparse
import json
import sys

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--start", required=True, help="Faultline's page to open first (its login page)")
    parser.add_argument("--link", required=True, help="the text of the single sign-on link")
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", required=True)
    args = parser.parse_args()

    options = Options()
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--no-proxy-server", "--window-size=1280,900"]:
        options.add_argument(flag)
    browser = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
    steps = []
    try:
        wait = WebDriverWait(browser, 20)
        browser.get(args.start)
        steps.append(browser.current_url)
        wait.until(EC.element_to_be_clickable((By.LINK_TEXT, args.link))).click()
        # The provider's own page.
        wait.until(EC.presence_of_element_located((By.ID, "username")))
        steps.append(browser.current_url)
        browser.find_element(By.ID, "username").send_keys(args.user)
        browser.find_element(By.ID, "password").send_keys(args.password)
        provider = browser.current_url
        browser.find_element(By.ID, "submit").click()
        wait.until(lambda b: b.current_url.split("?")[0] != provider.split("?")[0] and b.find_elements(By.TAG_NAME, "h1"))
        print(json.dumps({
            "url": browser.current_url, "title": browser.title,
            "h1": browser.find_element(By.TAG_NAME, "h1").text,
            "cookies": sorted(c["name"] for c in browser.get_cookies()),
            "steps": steps, "body": browser.find_element(By.TAG_NAME, "body").text[:2000],
        }))
    except TimeoutException:
        print(f"timed out at {browser.current_url}:\n{browser.page_source[:4000]}", file=sys.stderr)
        sys.exit(1)
    finally:
        browser.quit()


if __name__ == "__main__":
    main()
