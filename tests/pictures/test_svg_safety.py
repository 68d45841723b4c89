"""An SVG picture is kept only when an allow-list parser finds drawing alone: no script,
no event handler, no reference outside itself (however encoded, in XML or in CSS), no
CSS function that loads an image, no foreignObject, no DOCTYPE or entities. From the
provider (over HTTP, the fake's Images API), a backup (test_picture_backup.py) or the
demo (whose own pictures pass)."""

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
# A presentation attribute's value is CSS: escapes and comments are decoded before a
# function that loads something (url(), image-set(), ...) is looked for.
HOSTILE_CSS = {
    "hex-escaped-url": rb"\75 rl(https://example.com/x)",
    "six-digit-escaped-url": rb"\000075rl(https://example.com/x)",
    "escaped-letter-url": rb"u\rl(http://example.com/x)",
    "escaped-parenthesis-url": rb"url\28 https://example.com/x)",
    "uppercase-escaped-url": rb"U\52L(https://example.com/x)",
    "url-behind-a-comment": rb"url(/*x*/#a) url(/**/'https://example.com/x')",
    "comment-hiding-a-local-url": rb"url(/*x*/#a)",
    "escaped-newline-in-url": rb"ur\&#10;l(https://example.com/x)",
    "image-set": rb"image-set('https://example.com/x' 1x)",
    "webkit-image-set": rb"-webkit-image-set(&quot;https://example.com/x&quot; 1x)",
    "escaped-image-set": rb"\69 mage-set(/**/'https://example.com/x' 1x)",
    "image": rb"image('https://example.com/x')",
    "cross-fade": rb"cross-fade('https://example.com/x', 'https://example.com/y')",
    "element": rb"element(#a)",
    "moz-element": rb"-moz-element(#a)",
    "src": rb"src('https://example.com/x')",
    "escaped-data": rb"url(#a) \64 ata:image/svg+xml,x",
}
UNSAFE |= {f"css-{name}": SVG + b'<rect width="9" fill="' + value + b'"/></svg>'
           for name, value in HOSTILE_CSS.items()}
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


@pytest.mark.parametrize("fill", [rb"url(#g)", rb"URL( '#g' )", rb"url(&quot;#g&quot;)",
                                  rb"\75 rl(#g)", rb"url(\#g)", rb"url(#g) /* a glow */",
                                  rb"rgb(18, 52, 86)"])
def test_a_css_value_that_reads_a_part_of_the_picture_is_kept(fill):
    svg = SAFE.replace(b'fill="url(#g)"', b'fill="' + fill + b'"')
    assert fill in svg and checked(svg) == "image/svg+xml"


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

