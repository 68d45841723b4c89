"""A device is a device, in two browsers: a tablet chooses Arabic for itself and writes a
story for Sami; a phone opened afterwards shows the household's language (Spanish, its
default for new devices) and a form for no one named; the tablet keeps its own.
Screenshots in test-artifacts/."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect

from tests.helpers.browser import ARTIFACTS, needs_chromium, served_over_http
from tests.helpers.waits import HTTP_TIMEOUT_S

pytestmark = needs_chromium


@pytest.fixture
def spanish_household(settings):
    """The household's app, its pages' language Spanish (the default for new devices)."""
    with served_over_http(settings) as url:
        with httpx.Client(base_url=url, timeout=HTTP_TIMEOUT_S) as http:
            chosen = http.post("/children/language", json={"language": "es"})
            assert chosen.status_code == 200, chosen.text
        yield url


def test_a_second_device_starts_from_the_households_choice_not_the_firsts(
    open_page, spanish_household
):
    url = spanish_household
    tablet = open_page(url, "tablet").page
    tablet.goto(url + "/children")
    expect(tablet.locator("html")).to_have_attribute("lang", "es")
    tablet.select_option("#device-language", "ar")
    tablet.locator("#language form[action='/preferences'] button[type=submit]").click()
    expect(tablet.locator("html")).to_have_attribute("lang", "ar")
    expect(tablet.locator("html")).to_have_attribute("dir", "rtl")
    tablet.goto(url + "/")
    tablet.fill("#child_name", "Sami")
    tablet.fill("#prompt", "a lantern that hums")
    tablet.locator("#story-form button[type=submit]").click()
    tablet.wait_for_selector("#jobs .job-card")
    tablet.goto(url + "/")
    expect(tablet.locator("#child_name")).to_have_value("Sami")

    phone = open_page(url, "phone").page  # a second browser: none of the tablet's cookies
    phone.goto(url + "/")
    expect(phone.locator("html")).to_have_attribute("lang", "es")
    expect(phone.locator("html")).to_have_attribute("dir", "ltr")
    expect(phone.locator("#child_name")).to_have_value("")
    phone.screenshot(path=str(ARTIFACTS / "second-device-phone.png"))

    tablet.reload()
    expect(tablet.locator("html")).to_have_attribute("lang", "ar")  # the tablet's own still
    expect(tablet.locator("#child_name")).to_have_value("Sami")
    tablet.screenshot(path=str(ARTIFACTS / "first-device-tablet.png"))
