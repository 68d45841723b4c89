"""A device is a device: the pages' language and the story form's last child are each
device's own choice (its cookies); the household's language is only the default for a
device that has not chosen, and no device starts from another's last child."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator

import httpx
import pytest
from starlette.applications import Starlette

from tests.helpers.app import OWN_ORIGIN, serve
from tests.helpers.forms import submit
from tests.web.test_languages import lang_dir

pytestmark = pytest.mark.anyio


@contextlib.asynccontextmanager
async def another_device(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    """A second browser on the same running app: none of the first one's cookies."""
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50001))
    async with httpx.AsyncClient(transport=transport, base_url=OWN_ORIGIN,
                                 headers={"Origin": OWN_ORIGIN}) as device:
        yield device


async def test_each_device_keeps_its_language_and_a_new_one_starts_from_the_households(
    make_app,
):
    app = make_app()
    async with serve(app, from_own_pages=True) as tablet:
        await tablet.post("/children/language", data={"language": "es"})  # the default
        chose = await tablet.post("/preferences",
                                  data={"language": "ar", "next": "/children#language"})
        assert chose.status_code == 303 and chose.headers["location"] == "/children#language"
        assert lang_dir((await tablet.get("/")).text) == ("ar", "rtl")
        async with another_device(app) as phone:
            assert lang_dir((await phone.get("/")).text) == ("es", "ltr")
            assert lang_dir((await phone.get("/stories")).text) == ("es", "ltr")
        assert lang_dir((await tablet.get("/stories")).text) == ("ar", "rtl")  # still its own
        children = (await tablet.get("/children", headers={"Accept": "text/html"})).text
        device_select = re.search(r'<select id="device-language".*?</select>', children, re.S)
        assert device_select and '<option value="ar" lang="ar" selected>' in device_select[0]
        # Back to the household's, as on a new device; a cookie naming no language is passed over.
        await tablet.post("/preferences", data={"language": ""})
        assert lang_dir((await tablet.get("/")).text) == ("es", "ltr")
        tablet.cookies.set("language", "klingon")
        assert lang_dir((await tablet.get("/")).text) == ("es", "ltr")


async def test_ui_language_still_wins_over_a_devices_choice(make_app):
    async with serve(make_app(ui_language="de"), from_own_pages=True) as tablet:
        await tablet.post("/preferences", data={"language": "ar"})
        assert lang_dir((await tablet.get("/")).text) == ("de", "ltr")


async def test_a_new_device_does_not_start_from_another_devices_last_child(make_app):
    app = make_app()
    async with serve(app, from_own_pages=True) as tablet:
        await submit(tablet, **{"for": "other", "child_name": "Sami", "age": "6",
                                "length": "long"})
        home = (await tablet.get("/")).text
        assert re.search(r'id="child_name"[^>]*value="Sami"', home)  # this device's own
        assert 'value="long" checked' in home
        async with another_device(app) as phone:
            page = (await phone.get("/")).text
            fresh = re.search(r'<form id="story-form".*?</form>', page, re.S)
            assert fresh, page
            fresh = fresh[0]
            assert "Sami" not in fresh  # the household's card for Sami may be listed, not the form
            assert re.search(r'id="child_name"[^>]*value=""', fresh)
            assert 'value="medium" checked' in fresh
