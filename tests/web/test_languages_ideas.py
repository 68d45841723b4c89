"""Ideas in the story's language: a one-tap story's idea is said in the language it will be
written in (the child's profile's, else the page's), and one of the form's ideas, tapped on
a page in one language for a story in another, reaches the storyteller in the story's."""

from __future__ import annotations

import html
import re
from datetime import datetime

import pytest

from app.i18n import gettext, speaking
from app.ideas import southern_hemisphere, tonight_idea
from tests.helpers.app import serve, wait_for_job
from tests.helpers.forms import job_id_of, submit

pytestmark = [pytest.mark.anyio, pytest.mark.own_pages]

SPANISH = {"Accept-Language": "es-ES,es;q=0.9"}


def prompt_of(call: dict) -> str:
    return call["body"]["messages"][-1]["content"]


def one_tap_forms(home: str) -> list[dict[str, str]]:
    forms = re.findall(r'<form method="post" action="/stories/generate"'
        r' data-spends="stories">(.*?)</form>', home, re.S)
    return [{name: html.unescape(value) for name, value in
             re.findall(r'name="(\w+)" value="([^"]*)"', form)} for form in forms]


async def test_a_one_tap_idea_is_said_in_the_language_its_story_is_written_in(
        make_app, fake_llm):
    app = make_app()
    async with serve(app, from_own_pages=True) as browser:
        browser.headers.update(SPANISH)
        for child in ({"name": "Theo", "likes": "zorros"},  # any language: the page's
                      {"name": "Zoé", "language": "fr", "companions": "Pip"}):
            assert (await browser.post("/children", json=child)).status_code == 201
        zone = app.state.settings.tz
        tonight, south = datetime.now(zone).date(), southern_hemisphere(zone)
        children = {child.name: child for child in await app.state.services.children.all()}
        taps = {form["child_id"]: form for form in one_tap_forms((await browser.get("/")).text)
                if "sibling_id" not in form}
        theo, zoe = taps[str(children["Theo"].id)], taps[str(children["Zoé"].id)]
        assert theo["language"] == "es" and zoe["language"] == "fr"
        assert theo["prompt"] == tonight_idea([children["Theo"]], tonight, southern=south,
                                              language="es")
        assert zoe["prompt"] == tonight_idea([children["Zoé"]], tonight, southern=south,
                                             language="fr")
        assert " avec Pip" in zoe["prompt"] and "zorros" in theo["prompt"]
        [both] = [form for form in one_tap_forms((await browser.get("/")).text)
                  if "sibling_id" in form]
        assert both["language"] == taps[both["child_id"]]["language"]

        job = await wait_for_job(browser, job_id_of(
            await browser.post("/stories/generate", data=theo)))
        assert job["status"] == "completed"
        sent = prompt_of(fake_llm.requests[-1])
        assert f"<idea>{theo['prompt']}</idea>" in sent
        assert "Write the story in Spanish." in sent


async def test_a_form_idea_tapped_on_a_spanish_page_reaches_a_french_story_in_french(
        make_app, fake_llm):
    async with serve(make_app(), from_own_pages=True) as browser:
        browser.headers.update(SPANISH)
        home = (await browser.get("/")).text
        with speaking("es"):
            tapped = gettext("a trip to the moon")
        with speaking("fr"):
            wanted = gettext("a trip to the moon")
        assert f'data-idea="{tapped}"' in home and tapped != wanted
        job = await wait_for_job(browser, job_id_of(
            await submit(browser, prompt=tapped, language="fr")))
        assert job["status"] == "completed"
        sent = prompt_of(fake_llm.requests[-1])
        assert f"<idea>{wanted}</idea>" in sent and "Write the story in French." in sent
        # A prompt of the family's own is sent as they wrote it.
        job = await wait_for_job(browser, job_id_of(
            await submit(browser, prompt=f"{tapped}, con Lucía", language="fr")))
        assert f"<idea>{tapped}, con Lucía</idea>" in prompt_of(fake_llm.requests[-1])
