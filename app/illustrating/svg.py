"""Whether an SVG picture is only a picture: read by an allow-list parser, never by a
pattern over its bytes.

    unsafe_svg(data)    # None: shapes only; else a short reason ("an event handler (onload)")

An SVG from the demo, the provider or a backup is kept only when its XML parses and holds
nothing but drawing: the elements and attributes below, references only inside itself
(`href="#sky"`, `url(#glow)`). Refused: scripts, event handlers (`onload=`), links out
(`href="https://…"`, `url(https://…)`, `javascript:` however its letters are encoded: the
parser decodes the entities before we look, and a value is read as CSS reads it, its
escapes decoded and its comments dropped, so `\\75 rl(https://…)` is a url()), any CSS
function that can load an image (`image-set()`, `-webkit-image-set()`, `image()`,
`cross-fade()`, `element()`, `src()`; `url()` unless it is `url(#id)`), `<foreignObject>`
and any element outside the allow-list, a DOCTYPE or entity declaration, processing
instructions, and any XML that does not parse (`<svg/onload=…>` is not XML). The pictures
are served as images with a CSP besides; this keeps one that tries from being stored at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from xml.parsers import expat

SVG_NS, XLINK_NS = "http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"
ELEMENTS = frozenset({
    "svg", "g", "defs", "title", "desc", "symbol", "use", "path", "rect", "circle",
    "ellipse", "line", "polyline", "polygon", "linearGradient", "radialGradient", "stop",
    "clipPath", "mask", "pattern", "filter", "feGaussianBlur", "feOffset", "feBlend",
    "feColorMatrix", "feFlood", "feComposite", "feMerge", "feMergeNode", "feTurbulence",
    "feDisplacementMap", "text", "tspan",
})
ATTRIBUTES = frozenset({
    "id", "class", "viewBox", "width", "height", "x", "y", "x1", "y1", "x2", "y2", "cx",
    "cy", "r", "rx", "ry", "fx", "fy", "d", "points", "transform", "fill", "fill-opacity",
    "fill-rule", "stroke", "stroke-width", "stroke-opacity", "stroke-linecap",
    "stroke-linejoin", "stroke-dasharray", "opacity", "offset", "stop-color", "stop-opacity",
    "gradientUnits", "gradientTransform", "spreadMethod", "clip-path", "clip-rule", "mask",
    "maskUnits", "maskContentUnits", "patternUnits", "patternContentUnits",
    "patternTransform", "filter", "filterUnits", "primitiveUnits", "in", "in2", "result",
    "stdDeviation", "dx", "dy", "mode", "values", "type", "operator", "k1", "k2", "k3", "k4",
    "baseFrequency", "numOctaves", "seed", "scale", "xChannelSelector", "yChannelSelector",
    "flood-color", "flood-opacity", "preserveAspectRatio", "version", "font-family",
    "font-size", "font-weight", "text-anchor", "letter-spacing", "visibility", "display",
    "href", f"{XLINK_NS} href", "http://www.w3.org/XML/1998/namespace space",
})
# Anything that would leave the picture, whatever attribute it hides in.
_OUTSIDE = re.compile(r"(java|vb)script:|data:|@import|expression\(", re.IGNORECASE)
# A value is read as CSS reads it: an escape is a backslash and 1-6 hex digits (then one
# optional whitespace), a backslash-newline is nothing, a backslash and any other character
# is that character; a comment is nothing.
_CSS_ESCAPE = re.compile(
    r"\\(?:([0-9a-fA-F]{1,6})(?:\r\n|[ \t\n\r\f])?|\r\n|[\n\r\f]|(.)|$)", re.DOTALL)
_CSS_COMMENT = re.compile(r"/\*.*?(?:\*/|$)", re.DOTALL)
# A function call (its name, and the first character of its argument: a lookahead, so
# `f(url(...))` is read as two calls), and the ones that can load something, with or
# without a vendor prefix (-webkit-image-set): only url(#id), inside the picture, may.
_CSS_FUNCTION = re.compile(r"([-\w]+)\s*\((?=\s*(?:['\"]\s*)?(\S?))")
_VENDOR_PREFIX = re.compile(r"^-[a-z]+-")
_LOADING = frozenset({"url", "image-set", "image", "cross-fade", "element", "src",
                      "image-rect"})


class _Unsafe(Exception):
    pass


def _element(name: str, attributes: dict[str, str]) -> None:
    namespace, _, local = name.rpartition(" ")
    if namespace != SVG_NS or local not in ELEMENTS:
        raise _Unsafe(f"a <{local}> element")
    for attribute, value in attributes.items():
        local_attribute = attribute.rpartition(" ")[2]
        if local_attribute.lower().startswith("on"):
            raise _Unsafe(f"an event handler ({local_attribute})")
        if attribute not in ATTRIBUTES:
            raise _Unsafe(f"a {local_attribute} attribute")
        if local_attribute == "href" and not value.strip().startswith("#"):
            raise _Unsafe("a link outside the picture")
        _css_value(value)
        if _OUTSIDE.search(value.replace("\x00", "").replace(" ", "")):  # as it is written
            raise _Unsafe("a link outside the picture")


def _css_value(value: str) -> None:
    """_Unsafe if `value`, read as CSS, loads anything but a part of the picture itself.
    Read both with its comments and without: inside `url(...)` or a string `/*` starts no
    comment, elsewhere a comment may split what we look for."""
    for css in (_css_decoded(value), _css_decoded(_CSS_COMMENT.sub("", value))):
        for name, first in _CSS_FUNCTION.findall(css):
            function = _VENDOR_PREFIX.sub("", name.lower())
            if function == "url" and first != "#":
                raise _Unsafe("a url() outside the picture")
            if function in _LOADING and function != "url":
                raise _Unsafe(f"a CSS {name.lower()}() function")
        if _OUTSIDE.search(re.sub(r"[\s\x00]", "", css)):
            raise _Unsafe("a link outside the picture")


def _css_decoded(value: str) -> str:
    """`value` with its CSS escapes decoded (`\\75 rl(` is `url(`)."""
    def character(escape: re.Match[str]) -> str:
        digits, other = escape.groups()
        if digits is None:
            return other or ""
        code = int(digits, 16)
        return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"
    return _CSS_ESCAPE.sub(character, value)


def _refuse(what: str) -> Callable[..., None]:
    def handler(*_: object) -> None:
        raise _Unsafe(what)
    return handler


def unsafe_svg(data: bytes) -> str | None:
    """Why this SVG is not only a picture; None when it is."""
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.StartElementHandler = _element
    parser.StartDoctypeDeclHandler = _refuse("a DOCTYPE")
    parser.EntityDeclHandler = _refuse("an entity declaration")
    parser.ProcessingInstructionHandler = _refuse("a processing instruction")
    try:
        parser.Parse(data, True)
    except _Unsafe as unsafe:
        return str(unsafe)
    except expat.ExpatError:
        return "an SVG that is not well-formed XML"
    return None
