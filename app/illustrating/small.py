"""A picture's bytes checked for what they are, and its small version made once.

    content_type = image_type(data)          # None: none of the four kinds we serve
    small, small_type = small_version(data, content_type)

The small version is what the library's and the home page's rows show (a thumbnail of a
few dozen pixels, sharp on a 3x screen): WebP at SMALL_SIDE pixels at most, kept under
SMALL_MAX_BYTES. An SVG is small already (the demo's are 4 KB) and is its own small
version. Made with Pillow, off the event loop.
"""

from __future__ import annotations

import io
import re

PNG, JPEG, WEBP, SVG = "image/png", "image/jpeg", "image/webp", "image/svg+xml"
SMALL_SIDE = 240
SMALL_MAX_BYTES = 30_000
SMALL_QUALITIES = (72, 55, 40)
PICTURE_MAX_BYTES = 4 * 1024 * 1024  # story_pictures' CHECK
MAX_PIXELS = 4096 * 4096  # more than any picture we ask for: a bomb, not a picture
# An SVG served as an image cannot run anything; one that tries is refused all the same.
_SVG_ACTIVE = re.compile(rb"<script|<foreignObject|\son\w+\s*=|javascript:", re.I)


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
        if _SVG_ACTIVE.search(data):
            raise NotAPicture("an SVG picture with a script in it")
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
