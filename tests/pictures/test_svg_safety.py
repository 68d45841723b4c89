"""An SVG picture is kept only when an allow-list parser finds drawing alone: no script,
no event handler, no reference outside itself (however encoded), no foreignObject, no
DOCTYPE or entities. From the provider (over HTTP, the fake's Images API), a backup
(test_picture_backup.py) or the demo (whose own pictures pass)."""

from __future__ import annotations

import html

import pytest

from app.illustrating import Scene
from app.illustrating.demo import DemoIllustrator
from app.illustrating.small import NotAPicture, checked, versions
from tests.helpers.app import serve
from tests.helpers.pictures import STORY_TEXT, picture_when, story_of

pytestmark = pytest.mark.anyio
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
UNSAFE = {
    "onload-without-a-space": b"<svg/onload=alert(1)>",
    "event-handler": b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>',
    "script": SVG + b"<script>alert(1)</script></svg>",
    "entity-encoded-javascript": SVG + b'<use href="&#106;avascript:alert(1)"/></svg>',
    "hex-encoded-javascript": SVG + b'<use xlink:href="&#x6a;avascript:alert(1)"/></svg>',
    "outside-href": SVG + b'<use href="https://example.com/s.svg#a"/></svg>',
    "outside-xlink-href": SVG + b'<use xlink:href="//example.com/s.svg#a"/></svg>',
    "outside-url": SVG + b'<rect width="9" fill="url(https://example.com/x)"/></svg>',
    "foreign-object": SVG + b"<foreignObject><p xmlns='http://www.w3.org/1999/xhtml'/>"
                            b"</foreignObject></svg>",
    "doctype-entity": b'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY e "x">]>'
                      b'<svg xmlns="http://www.w3.org/2000/svg"><desc>&e;</desc></svg>',
    "a-link": SVG + b'<a href="#x"><rect width="9"/></a></svg>',
    "style-element": SVG + b"<style>@import url(https://example.com/x.css);</style></svg>",
    "stylesheet-instruction": b'<?xml-stylesheet href="https://example.com/x.css"?>'
                              + SVG + b"</svg>",
}
SAFE = SVG + (b'<defs><linearGradient id="g"><stop offset="0" stop-color="#123"/>'
              b'</linearGradient><circle id="c" r="4"/></defs>'
              b'<rect width="9" height="6" fill="url(#g)"/><use xlink:href="#c"/></svg>')


@pytest.mark.parametrize("svg", list(UNSAFE.values()), ids=list(UNSAFE))
def test_an_svg_that_is_more_than_a_picture_is_refused(svg):
    with pytest.raises(NotAPicture):
        checked(svg)
    with pytest.raises(NotAPicture):
        versions(svg, "image/svg+xml")


def test_drawing_alone_with_references_inside_itself_is_kept():
    assert checked(SAFE) == "image/svg+xml"


async def test_the_demos_own_pictures_pass():
    for title in ("The Lantern Fox", "A Boat at Sea", "The Castle Dragon", "Little House"):
        picture = await DemoIllustrator().draw(Scene(title, "Once", likes="red"), job_id=1)
        assert checked(picture.data) == "image/svg+xml"


@pytest.mark.slow
async def test_a_provider_svg_with_an_event_handler_is_not_kept(make_app, fake_llm):
    fake_llm.story = STORY_TEXT
    fake_llm.images.picture = UNSAFE["onload-without-a-space"]
    async with serve_drawing(make_app) as client:
        story_id = await story_of(client)
        picture = await picture_when(client, story_id)
        page = html.unescape((await client.get(f"/stories/{story_id}")).text)
        served = await client.get(f"/stories/{story_id}/picture")
    assert picture["status"] == "failed" and picture["url"] is None
    assert "a picture that cannot be shown" in page
    assert served.status_code == 404


def serve_drawing(make_app):
    return serve(make_app(illustrator="openai", image_model="fake-image"))

