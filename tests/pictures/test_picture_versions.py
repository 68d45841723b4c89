"""What is kept of a picture drawn: fitted to the page (a PNG, or more pixels than asked for,
made a WebP within the page's bytes), or kept byte for byte when it fits; and its small
version. End to end: the fake provider answering with a heavy PNG."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from app.illustrating import Scene
from app.illustrating.demo import DemoIllustrator
from app.illustrating.small import (
    JPEG,
    PAGE_MAX_BYTES,
    PAGE_SIDE,
    PNG,
    SMALL_MAX_BYTES,
    SMALL_SIDE,
    SVG,
    WEBP,
    image_type,
    versions,
)
from tests.helpers.app import ACCEPT_JSON, serve
from tests.helpers.fake_images import painted
from tests.helpers.pictures import STORY_TEXT, picture_when, story_of

pytestmark = pytest.mark.anyio


def size_of(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as image:
        return image.size


@pytest.mark.parametrize(("size", "fmt", "content_type"), [
    ((1536, 1024), "PNG", PNG),     # a model with no WebP, at its own size
    ((768, 512), "PNG", PNG),       # the size asked for, as a PNG: 490 KB
    ((1536, 1024), "WEBP", WEBP),   # WebP, but more pixels than asked for
    ((2048, 2048), "JPEG", JPEG),
], ids=["big-png", "png", "big-webp", "big-jpeg"])
@pytest.mark.slow
def test_a_heavy_picture_is_fitted_to_the_page(size, fmt, content_type):
    drawn = painted(size, fmt)
    (page, page_type), (small, small_type) = versions(drawn, content_type)
    assert (page_type, image_type(page)) == (WEBP, WEBP)
    assert len(page) <= PAGE_MAX_BYTES and page != drawn
    assert max(size_of(page)) <= PAGE_SIDE
    width, height = size_of(page)
    assert abs(width / height - size[0] / size[1]) < 0.01  # the same shape
    assert small_type == WEBP and len(small) <= SMALL_MAX_BYTES


def test_noise_too_heavy_for_any_quality_is_fitted_with_fewer_pixels():
    noise = Image.effect_noise((768, 512), 120).convert("RGB")
    out = io.BytesIO()
    noise.save(out, "PNG")
    (page, _), _ = versions(out.getvalue(), PNG)
    assert len(page) <= PAGE_MAX_BYTES


def test_a_picture_that_fits_is_kept_byte_for_byte():
    drawn = painted((768, 512), "WEBP")  # 70 KB: a heavy picture, as asked for
    assert len(drawn) <= PAGE_MAX_BYTES
    (page, page_type), _ = versions(drawn, WEBP)
    assert (page, page_type) == (drawn, WEBP)


async def test_the_demo_svg_is_kept_as_it_is():
    picture = await DemoIllustrator().draw(Scene("The Lantern Fox", "Once", "foxes"), job_id=1)
    assert versions(picture.data, SVG) == ((picture.data, SVG), (picture.data, SVG))


@pytest.mark.slow
async def test_a_provider_sending_a_heavy_png_costs_the_page_no_more_than_its_bound(
        make_app, fake_llm):
    fake_llm.story = STORY_TEXT
    fake_llm.images.picture = painted((1536, 1024), "PNG")  # 2.4 MB
    async with serve(make_app(illustrator="openai", image_model="fake-image")) as client:
        story_id = await story_of(client)
        picture = await picture_when(client, story_id)
        assert picture["status"] == "ready", picture
        served = await client.get(picture["url"])
        assert served.headers["content-type"] == "image/webp"
        assert len(served.content) <= PAGE_MAX_BYTES
        assert max(size_of(served.content)) <= PAGE_SIDE
        page = await client.get(f"/stories/{story_id}", headers=ACCEPT_JSON)
        assert page.json()["picture"]["status"] == "ready"


def test_even_a_picture_of_noise_has_a_thumbnail_a_library_page_of_50_can_carry():
    """50 rows of the heaviest thumbnails there are stay far within the page's 600 KB."""
    noise = Image.effect_noise((768, 512), 120).convert("RGB")
    out = io.BytesIO()
    noise.save(out, "PNG")
    _, (small, _) = versions(out.getvalue(), PNG)
    assert max(size_of(small)) <= SMALL_SIDE
    assert 50 * len(small) <= 400_000
