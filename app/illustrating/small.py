"""A picture's bytes checked for what they are, fitted to the page, and its small version,
each made once, when the picture is stored.

    content_type = image_type(data)          # None: none of the four kinds we serve
    (data, content_type), (small, small_type) = versions(drawn, drawn_type)  # a new one
    small, small_type = small_version(data, content_type)    # an imported one, kept as is

The page version is what a story page shows, and what is kept: a picture drawn by the
provider is fitted to PAGE_SIDE pixels and PAGE_MAX_BYTES (WebP), so a story page with its
picture stays within its 120 KB on a first visit even when a model sends a PNG or a larger
picture than asked for. One that fits already is kept byte for byte, as is an SVG.

The small version is what the library's and the home page's rows show (a thumbnail of a
few dozen pixels, sharp on a 3x screen): WebP at SMALL_SIDE pixels at most, kept under
SMALL_MAX_BYTES (a picture of pure noise makes one of 5 KB; a painted one, 1 KB), so a
library page of 50 stays far within its 600 KB. An SVG is small already (the demo's are
4 KB) and is its own small version. Made with Pillow, off the event loop.
"""

from __future__ import annotations

import io

from app.illustrating.svg import unsafe_svg

PNG, JPEG, WEBP, SVG = "image/png", "image/jpeg", "image/webp", "image/svg+xml"
SMALL_SIDE = 144  # a row's thumbnail is 48 x 32 CSS pixels: sharp on a 3x screen
SMALL_MAX_BYTES = 30_000
SMALL_QUALITIES = (72, 55, 40)
PAGE_SIDE = 768  # the size asked for (openai_images.IMAGE_SIZE): 600 CSS pixels wide at most
PAGE_MAX_BYTES = 80_000  # with the page's own 36 KB, within the story page's 120 KB
# Tried in turn until one fits: quality first, then fewer pixels (a noisy picture).
PAGE_FITS = ((PAGE_SIDE, 80), (PAGE_SIDE, 60), (PAGE_SIDE, 45), (640, 45), (512, 45), (384, 40))
PICTURE_MAX_BYTES = 4 * 1024 * 1024  # story_pictures' CHECK
MAX_PIXELS = 4096 * 4096  # more than any picture we ask for: a bomb, not a picture


class NotAPicture(ValueError):
    """The bytes are not a picture we can keep; str(error) says why."""


def image_type(data: bytes) -> str | None:
    """The content type of the bytes, by their first bytes: PNG, JPEG, WebP or SVG."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return PNG
    if data.startswith(b"\xff\xd8\xff"):
        return JPEG
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return WEBP
    head = data[:512].lstrip()
    if head.startswith(b"<svg") or (head.startswith(b"<?xml") and b"<svg" in head):
        return SVG
    return None


def checked(data: bytes) -> str:
    """The content type of a picture fit to keep and serve; NotAPicture otherwise."""
    if not data or len(data) > PICTURE_MAX_BYTES:
        raise NotAPicture(f"a picture must be 1 byte to {PICTURE_MAX_BYTES // 2**20} MB")
    content_type = image_type(data)
    if content_type is None:
        raise NotAPicture("not a PNG, JPEG, WebP or SVG picture")
    if content_type == SVG:
        only_a_picture(data)
        return content_type
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.width * image.height > MAX_PIXELS:
                raise NotAPicture("a picture of too many pixels")
            image.verify()
    except NotAPicture:
        raise
    except Exception:
        raise NotAPicture("a picture that cannot be read") from None
    return content_type


def only_a_picture(svg: bytes) -> None:
    """NotAPicture unless the SVG is drawing alone (app/illustrating/svg.py): served as an
    image it could run nothing, but one that tries is not kept at all."""
    unsafe = unsafe_svg(svg)
    if unsafe is not None:
        raise NotAPicture(f"an SVG picture with {unsafe} in it")


def versions(data: bytes, content_type: str) -> tuple[tuple[bytes, str], tuple[bytes, str]]:
    """A picture just drawn: its page version (to keep) and its small version."""
    page = page_version(data, content_type)
    return page, small_version(*page)


def page_version(data: bytes, content_type: str) -> tuple[bytes, str]:
    """(bytes, content type) of the picture as a story page shows it, and as it is kept."""
    if content_type == SVG:
        only_a_picture(data)
        return data, SVG
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        fits = (len(data) <= PAGE_MAX_BYTES and content_type in (WEBP, JPEG)
                and max(image.size) <= PAGE_SIDE)
        if fits:
            return data, content_type
        picture = image.convert("RGB")
    for side, quality in PAGE_FITS:
        fitted = picture.copy()
        fitted.thumbnail((side, side))
        out = io.BytesIO()
        fitted.save(out, "WEBP", quality=quality, method=4)
        if out.tell() <= PAGE_MAX_BYTES:
            break
    return out.getvalue(), WEBP


def small_version(data: bytes, content_type: str) -> tuple[bytes, str]:
    """(bytes, content type) of the picture's small version."""
    if content_type == SVG:
        if len(data) > SMALL_MAX_BYTES:
            raise NotAPicture("an SVG picture too large to show small")
        return data, SVG
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        image.thumbnail((SMALL_SIDE, SMALL_SIDE))
        small = image.convert("RGB")
    for quality in SMALL_QUALITIES:
        out = io.BytesIO()
        small.save(out, "WEBP", quality=quality, method=4)
        if out.tell() <= SMALL_MAX_BYTES:
            break
    return out.getvalue(), WEBP
