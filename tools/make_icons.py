"""Draw the home-screen icons (static/icons/*.png) with the standard library alone.

    python tools/make_icons.py          # rewrites static/icons/

A crescent moon (the colours of static/moon.svg and the dark theme) and three small stars,
drawn with anti-aliased edges from distances, written as RGBA PNGs by a small encoder
(zlib + struct). "any" icons are a rounded square; the maskable icon and the
apple-touch-icon fill the whole square (the platform cuts its own shape), with the moon
inside the maskable safe zone (the middle 80%).
"""

from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

ICONS_DIR = Path(__file__).resolve().parent.parent / "static" / "icons"
BACKGROUND = (22, 18, 14)  # --bg of the dark theme, the manifest's theme_color
MOON = (232, 200, 114)  # static/moon.svg
STAR = (236, 223, 200)  # --text of the dark theme
# In units of the icon's side: the moon is disc A minus disc B; stars are small discs.
MOON_DISC = (0.45, 0.53, 0.30)
BITE_DISC = (0.60, 0.41, 0.255)
STARS = ((0.74, 0.70, 0.022), (0.80, 0.30, 0.016), (0.27, 0.24, 0.014))


def png(width: int, height: int, rgba_rows: list[bytes]) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    raw = b"".join(b"\x00" + row for row in rgba_rows)  # filter type 0 on every row
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def coverage(distance_inside_px: float) -> float:
    """How much of a pixel a shape covers, from the pixel centre's distance to its edge."""
    return min(max(distance_inside_px + 0.5, 0.0), 1.0)


def draw(size: int, *, full_bleed: bool, scale: float) -> bytes:
    """One icon: `scale` shrinks the moon and stars around the centre (the safe zone)."""
    radius = 0.22 * size  # the rounded square's corners, when not full bleed

    def place(x: float, y: float, r: float) -> tuple[float, float, float]:
        return ((0.5 + (x - 0.5) * scale) * size, (0.5 + (y - 0.5) * scale) * size,
                r * scale * size)

    moon, bite = place(*MOON_DISC), place(*BITE_DISC)
    stars = [place(*star) for star in STARS]
    rows = []
    for py in range(size):
        row = bytearray()
        y = py + 0.5
        for px in range(size):
            x = px + 0.5
            if full_bleed:
                back = 1.0
            else:  # signed distance to a rounded square
                qx = max(abs(x - size / 2) - (size / 2 - radius), 0.0)
                qy = max(abs(y - size / 2) - (size / 2 - radius), 0.0)
                back = coverage(radius - math.hypot(qx, qy))
            in_moon = coverage(moon[2] - math.hypot(x - moon[0], y - moon[1]))
            in_bite = coverage(bite[2] - math.hypot(x - bite[0], y - bite[1]))
            lit = in_moon * (1.0 - in_bite)
            star = max((coverage(r - math.hypot(x - cx, y - cy)) for cx, cy, r in stars),
                       default=0.0)
            colour = [b + (m - b) * lit for b, m in zip(BACKGROUND, MOON, strict=True)]
            colour = [c + (s - c) * star for c, s in zip(colour, STAR, strict=True)]
            row += bytes(round(c) for c in colour) + bytes([round(255 * back)])
        rows.append(bytes(row))
    return png(size, size, rows)


ICONS = {
    "icon-192.png": (192, False, 1.0),
    "icon-512.png": (512, False, 1.0),
    "maskable-512.png": (512, True, 0.72),  # all of it inside the middle 80% circle
    "apple-touch-icon.png": (180, True, 0.86),
}


def main() -> None:
    ICONS_DIR.mkdir(parents=True, exist_ok=True)
    for name, (size, full_bleed, scale) in ICONS.items():
        (ICONS_DIR / name).write_bytes(draw(size, full_bleed=full_bleed, scale=scale))
        print(f"wrote static/icons/{name} ({size}x{size})")


if __name__ == "__main__":
    main()
