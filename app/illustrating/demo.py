"""The demo's illustrator: a night scene the app draws itself, as SVG, from the story.

    picture = await DemoIllustrator().draw(Scene("The Lantern Fox", "Once..."), job_id=1)

Everything is chosen from the title and the child's likes, so the same story always gets
the same picture: the sky's colours, where the moon is and how full, the stars, the hills'
shapes and colour (a colour the child likes tints them), and what stands on them (a boat
on the sea, a castle, a lighthouse, or a little house with a lit window among trees). The
SVG is shapes only: no script, no text, no link to anything, so it is safe to serve as an
image (and served with a CSP that forbids everything else besides).
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import re

from app.illustrating import Picture, Scene
from app.money import Usage

WIDTH, HEIGHT = 600, 400  # 3:2, as every picture's place on the page
HORIZON = 250
STAR_COUNT = 42
# Skies: top, middle, bottom of the gradient. Deep and calm: a picture never outshines
# the page in Night.
SKIES = (
    ("#0b1026", "#1d2a5c", "#47407a"),
    ("#0a1420", "#173a52", "#3f6a7a"),
    ("#120d24", "#32235a", "#6b4a7c"),
    ("#07131c", "#1a3346", "#5a5a7e"),
)
HILLS = ("#1f3b4d", "#2c4a3e", "#3b3356", "#2a3f5f")
# A colour the child likes tints the near hills.
COLOURS = {
    "red": "#6e2f3a", "pink": "#7a4460", "orange": "#7a4a2a", "yellow": "#76693a",
    "green": "#2f5a3a", "blue": "#2a4670", "purple": "#4c3670", "violet": "#4c3670",
    "gold": "#76693a", "silver": "#4d5866", "rojo": "#6e2f3a", "verde": "#2f5a3a",
    "azul": "#2a4670", "rouge": "#6e2f3a", "vert": "#2f5a3a", "bleu": "#2a4670",
}
MOTIFS = {
    "sea": ("sea", "ocean", "boat", "ship", "sail", "whale", "fish", "pirate", "island",
            "mar", "barco", "mer", "bateau", "meer"),
    "castle": ("castle", "king", "queen", "princess", "prince", "knight", "dragon",
               "castillo", "château", "schloss", "drache"),
    "lighthouse": ("lighthouse", "lantern", "light", "beacon", "faro", "phare"),
}
WINDOW = "#f2c46d"


FREE_PICTURE = Usage(images=1)  # drawn here: the ledger counts it, at no cost


class DemoIllustrator:
    name = "demo"
    model = "demo"

    async def draw(self, scene: Scene, *, job_id: int) -> Picture:
        await asyncio.sleep(0)
        return Picture(night_scene(scene).encode(), "image/svg+xml", self.model, FREE_PICTURE)

    async def aclose(self) -> None:
        return None


def night_scene(scene: Scene) -> str:
    """The SVG text: deterministic for a title and likes."""
    seed = hashlib.sha256(f"{scene.title}\n{scene.likes or ''}".encode()).digest()
    rng = random.Random(seed)
    words = set(re.findall(r"\w+", f"{scene.title} {scene.likes or ''} {scene.opening[:300]}"
                           .lower()))
    top, middle, bottom = rng.choice(SKIES)
    far = rng.choice(HILLS)
    near = next((COLOURS[word] for word in sorted(words) if word in COLOURS),
                rng.choice(HILLS))
    motif = next((name for name, keys in MOTIFS.items() if words & set(keys)), "house")
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}"'
        f' width="{WIDTH}" height="{HEIGHT}">',
        '<defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1">'
        f'<stop offset="0" stop-color="{top}"/><stop offset=".6" stop-color="{middle}"/>'
        f'<stop offset="1" stop-color="{bottom}"/></linearGradient>'
        '<radialGradient id="glow"><stop offset="0" stop-color="#fff6d8" stop-opacity=".35"/>'
        '<stop offset="1" stop-color="#fff6d8" stop-opacity="0"/></radialGradient></defs>',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="url(#sky)"/>',
        *_stars(rng),
        _moon(rng),
        _hill(rng, far, HORIZON - 30, 40),
    ]
    if motif == "sea":
        parts += _sea(rng)
    else:
        parts.append(_hill(rng, near, HORIZON + 20, 30))
        parts += {"castle": _castle, "lighthouse": _lighthouse}.get(motif, _house)(rng)
        parts.append(_hill(rng, _darker(near), HORIZON + 90, 20))
    parts.append("</svg>")
    return "".join(parts)


def _stars(rng: random.Random) -> list[str]:
    stars = []
    for _ in range(STAR_COUNT):
        x, y = rng.uniform(0, WIDTH), rng.uniform(0, HORIZON - 40)
        r = rng.choice((0.8, 1.0, 1.2, 1.6))
        stars.append(f'<circle cx="{x:.0f}" cy="{y:.0f}" r="{r}" fill="#fdf6e3"'
                     f' opacity="{rng.uniform(.45, .95):.2f}"/>')
    return stars


def _moon(rng: random.Random) -> str:
    """A full moon or a crescent (a second disc masked out of it), with a soft glow."""
    x, y, r = rng.uniform(90, WIDTH - 90), rng.uniform(60, 120), rng.uniform(26, 36)
    glow = f'<circle cx="{x:.0f}" cy="{y:.0f}" r="{r * 3:.0f}" fill="url(#glow)"/>'
    disc = f'cx="{x:.0f}" cy="{y:.0f}" r="{r:.0f}"'
    if rng.random() < 0.4:
        return f'{glow}<circle {disc} fill="#f6ecc9"/>'
    dx = rng.choice((-1, 1)) * r * rng.uniform(.45, .7)
    return (f'{glow}<mask id="phase"><circle {disc} fill="#fff"/><circle cx="{x + dx:.0f}"'
            f' cy="{y - r * .2:.0f}" r="{r * .95:.0f}" fill="#000"/></mask>'
            f'<circle {disc} fill="#f6ecc9" mask="url(#phase)"/>')


def _hill(rng: random.Random, colour: str, base: float, swell: float) -> str:
    """A rolling line of hills across the picture, filled to its foot."""
    points = [(x, base - rng.uniform(0, swell)) for x in range(0, WIDTH + 1, 100)]
    path = f"M0 {HEIGHT} L0 {points[0][1]:.0f}"
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        path += f" Q{(x0 + x1) / 2:.0f} {min(y0, y1) - swell / 2:.0f} {x1} {y1:.0f}"
    return f'<path d="{path} L{WIDTH} {HEIGHT} Z" fill="{colour}"/>'


def _house(rng: random.Random) -> list[str]:
    x = rng.uniform(120, WIDTH - 200)
    y = HORIZON - 5
    shapes = [f'<rect x="{x:.0f}" y="{y - 46:.0f}" width="64" height="50" fill="#1a2233"/>',
              f'<path d="M{x - 8:.0f} {y - 44:.0f} L{x + 32:.0f} {y - 78:.0f}'
              f' L{x + 72:.0f} {y - 44:.0f} Z" fill="#151b29"/>',
              f'<rect x="{x + 12:.0f}" y="{y - 32:.0f}" width="14" height="14" rx="2"'
              f' fill="{WINDOW}"/>',
              f'<circle cx="{x + 19:.0f}" cy="{y - 25:.0f}" r="22" fill="url(#glow)"/>']
    for _ in range(rng.randint(2, 3)):
        tx = rng.uniform(40, WIDTH - 40)
        if abs(tx - x - 32) < 70:
            continue
        th = rng.uniform(50, 80)
        shapes.append(f'<path d="M{tx:.0f} {y - th:.0f} L{tx + 22:.0f} {y + 10:.0f}'
                      f' L{tx - 22:.0f} {y + 10:.0f} Z" fill="#14202c"/>')
    return shapes


def _castle(rng: random.Random) -> list[str]:
    x, y = rng.uniform(140, WIDTH - 240), HORIZON - 5
    shapes = [f'<rect x="{x:.0f}" y="{y - 60:.0f}" width="100" height="64" fill="#1a2030"/>']
    for tower in (x - 16, x + 90):
        shapes.append(f'<rect x="{tower:.0f}" y="{y - 96:.0f}" width="26" height="100"'
                      f' fill="#161b2a"/>')
        shapes.append(f'<path d="M{tower - 4:.0f} {y - 96:.0f} L{tower + 13:.0f}'
                      f' {y - 124:.0f} L{tower + 30:.0f} {y - 96:.0f} Z" fill="#121725"/>')
    shapes += [f'<rect x="{x + 42:.0f}" y="{y - 34:.0f}" width="16" height="20" rx="8"'
               f' fill="{WINDOW}"/>',
               f'<circle cx="{x + 50:.0f}" cy="{y - 24:.0f}" r="26" fill="url(#glow)"/>']
    return shapes


def _lighthouse(rng: random.Random) -> list[str]:
    x, y = rng.uniform(140, WIDTH - 160), HORIZON
    return [f'<path d="M{x - 14:.0f} {y:.0f} L{x - 8:.0f} {y - 110:.0f} L{x + 8:.0f}'
            f' {y - 110:.0f} L{x + 14:.0f} {y:.0f} Z" fill="#1c2434"/>',
            f'<rect x="{x - 10:.0f}" y="{y - 128:.0f}" width="20" height="18" fill="{WINDOW}"/>',
            f'<circle cx="{x:.0f}" cy="{y - 119:.0f}" r="40" fill="url(#glow)"/>',
            f'<path d="M{x - 14:.0f} {y - 128:.0f} L{x:.0f} {y - 142:.0f} L{x + 14:.0f}'
            f' {y - 128:.0f} Z" fill="#141a27"/>']


def _sea(rng: random.Random) -> list[str]:
    shapes = [f'<rect y="{HORIZON:.0f}" width="{WIDTH}" height="{HEIGHT - HORIZON}"'
              ' fill="#12283a"/>']
    for row in range(5):
        y = HORIZON + 20 + row * 26
        shapes.append(f'<path d="M0 {y} Q150 {y - 6} 300 {y} T600 {y}" stroke="#2d4b63"'
                      ' stroke-width="2" fill="none" opacity=".7"/>')
    x = rng.uniform(120, WIDTH - 180)
    y = HORIZON + 40
    shapes += [f'<path d="M{x:.0f} {y:.0f} L{x + 90:.0f} {y:.0f} L{x + 72:.0f} {y + 18:.0f}'
               f' L{x + 16:.0f} {y + 18:.0f} Z" fill="#1b2230"/>',
               f'<path d="M{x + 44:.0f} {y - 4:.0f} L{x + 44:.0f} {y - 70:.0f}'
               f' L{x + 82:.0f} {y - 8:.0f} Z" fill="#d8cfb4" opacity=".85"/>',
               f'<rect x="{x + 18:.0f}" y="{y + 4:.0f}" width="8" height="6" fill="{WINDOW}"/>']
    return shapes


def _darker(colour: str) -> str:
    value = int(colour[1:], 16)
    r, g, b = (value >> 16) & 255, (value >> 8) & 255, value & 255
    return f"#{int(r * .7):02x}{int(g * .7):02x}{int(b * .7):02x}"
