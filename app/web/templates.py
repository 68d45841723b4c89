"""The templates: made once per app, rendered with the reader's preferences and the page
context every template gets (signed in or not, the CSRF token, demo mode).

    return render(request, "job.html", {"job": job})
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING

from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import Response

from app.dates import iso_time
from app.i18n import current, direction, gettext, ngettext, page_words
from app.i18n import formats as local
from app.languages import direction as language_direction
from app.lengths import BY_NAME
from app.money.amounts import money
from app.stories import paragraphs, text_language
from app.web.preferences import preferences

if TYPE_CHECKING:  # the lifespan builds them; the handlers only use them
    import jinja2
    from starlette.templating import Jinja2Templates

TEMPLATES_DIR = Path(__file__).resolve().parents[2] / "templates"
STATIC_DIR = Path(__file__).resolve().parents[2] / "static"


class Templates:
    """The templates, made on first use. Start-up does not wait for Jinja2's import (about
    a tenth of it), so a platform's first health check is answered sooner; the lifespan
    warms them in a thread once the app serves, so no page waits either."""

    def __init__(self, make: Callable[[], Jinja2Templates]) -> None:
        self._make = make
        self._made: Jinja2Templates | None = None
        self._lock = threading.Lock()  # the warm-up thread and a first render, at once

    def get(self) -> Jinja2Templates:
        if self._made is None:
            with self._lock:
                if self._made is None:
                    self._made = self._make()
        return self._made


def warm_pages(templates: Templates, language: str | None) -> None:
    """What a first page would otherwise wait for: the templates, and for a household
    that speaks another language than English, its catalogue and Babel's formats."""
    templates.get()
    if language is not None and language != "en":
        from babel import dates, numbers  # noqa: F401  (imported for the first page)

        from app.i18n.catalogues import catalogue

        catalogue(language)


def isolate_names(text: str, *names: str | None) -> Markup:
    """`text` escaped, with each of `names` in it isolated for direction (<bdi>), so a
    right-to-left name keeps its place in a left-to-right title and the other way round."""
    escaped = str(escape(text))
    found = sorted({str(escape(name)) for name in names if name}, key=len, reverse=True)
    if found:
        pattern = "|".join(re.escape(name) for name in found)
        escaped = re.sub(pattern, lambda match: f"<bdi>{match.group(0)}</bdi>", escaped)
    return Markup(escaped)  # noqa: S704 (escaped above; only <bdi> is added)


@functools.cache
def _compiled_templates() -> jinja2.BytecodeCache:
    """The process's compiled templates, shared by every environment make_templates makes
    (all alike: the same extensions and settings). A deploy's process makes one; the tests
    make one per app, and each would otherwise compile every template anew."""
    import jinja2

    class Compiled(jinja2.BytecodeCache):
        def __init__(self) -> None:
            self.code: dict[str, bytes] = {}

        def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            if (code := self.code.get(bucket.key)) is not None:
                bucket.bytecode_from_string(code)

        def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            self.code[bucket.key] = bucket.bytecode_to_string()

    return Compiled()


ROOM_POLL_CARDS = 5


def make_templates(
    timezone: tzinfo = UTC, *, static: Mapping[str, str], inline: Mapping[str, str] | None = None,
    card_poll_s: float = 3.0,
) -> Jinja2Templates:
    """The templates, with the filters and `static`: {relative name: fingerprinted URL}
    (app/web/assets.py), as in `<link rel="stylesheet" href="{{ static["style.css"] }}">`,
    `inline`: the small images a page carries in itself, as data: URLs (any other name
    gives its URL, as `static` does), and `card_poll_s`: how often an unfinished card
    polls (its htmx poll; a page without JavaScript refreshes itself every 3 s)."""
    from starlette.templating import Jinja2Templates  # see Templates

    templates = Jinja2Templates(directory=str(TEMPLATES_DIR))
    templates.env.bytecode_cache = _compiled_templates()
    # Templates change only with a deploy, like the static files: no stat() per render.
    templates.env.auto_reload = False
    templates.env.globals["static"] = static
    templates.env.globals["inline"] = {**static, **(inline or {})}
    templates.env.globals["card_poll_s"] = f"{card_poll_s:g}"
    # How often a page with a control that would spend asks whether it is closed now
    # (app/web/spend.py: closed): every few card polls, a page left open all evening is no load.
    templates.env.globals["room_poll_s"] = f"{card_poll_s * ROOM_POLL_CARDS:g}"
    # {% trans %} and _(): the request's language (app/i18n), chosen by its middleware.
    templates.env.add_extension("jinja2.ext.i18n")
    templates.env.install_gettext_callables(  # type: ignore[attr-defined]
        gettext, ngettext, newstyle=True)
    templates.env.globals["ui_lang"] = current
    templates.env.globals["ui_dir"] = direction
    templates.env.globals["page_words"] = page_words
    templates.env.globals["money"] = money
    # A string the code chose (a page's title, a table's label marked with N_): translated
    # without formatting, as a story's own title may hold a "%".
    templates.env.globals["tr"] = gettext
    # A story's length as a row of the library says it ("medium · 4 min").
    templates.env.filters["length_name"] = lambda size: gettext(
        BY_NAME[size].named if size in BY_NAME else size)
    templates.env.filters["iso"] = iso_time
    templates.env.filters["day"] = lambda moment: local.day(moment, timezone)
    templates.env.filters["when"] = lambda moment: local.when(moment, timezone)
    templates.env.filters["calendar_day"] = local.calendar_day  # a date, no time zone
    templates.env.filters["short_day"] = local.short_day
    templates.env.filters["long_day"] = local.long_day
    templates.env.filters["number"] = local.number
    templates.env.filters["paragraphs"] = paragraphs
    templates.env.filters["direction"] = language_direction  # {{ story.language | direction }}
    templates.env.filters["isolate"] = isolate_names  # {{ title | isolate(child, sibling) }}
    # A library row's language: as asked, unless its model writes one only (the demo).
    templates.env.filters["text_language"] = lambda row: text_language(row.language, row.model)
    return templates


def render(
    request: Request,
    template: str,
    context: Mapping[str, object] | None = None,
    *,
    status_code: int = 200,
    headers: dict[str, str] | None = None,
) -> Response:
    templates = request.app.state.templates.get()
    full_context = {
        # A fragment (`_name.html`) lands in a page that has them already.
        **(preferences(request) if not template.startswith("_") else {}),
        **request.app.state.page_context(request),
        **(context or {}),
    }
    response: Response = templates.TemplateResponse(
        request, template, full_context, status_code=status_code, headers=headers
    )
    return response
