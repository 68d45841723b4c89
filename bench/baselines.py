"""The baselines the app is measured against, served by the same uvicorn with the same flags.

    uvicorn bench.baselines:bare     # bare Starlette: the least any endpoint can cost
    uvicorn bench.baselines:stack    # the "stack floor": bare Starlette on the household's
                                     # stack, `databases`' pool connected before its first
                                     # 200 (the cold start's baseline)
    uvicorn bench.baselines:floor    # the "DB floor": + asyncpg doing the one statement an
                                     # endpoint minimally needs (DATABASE_URL)
    (the floor also serves the "render floor": the DB floor + the card's template)

The floor's endpoints do only what the database must: one round trip each. Its pool skips
asyncpg's reset query on release (the floor's statements leave no session state behind),
so it is the least work, not merely the usual code.

    GET  /healthz                 {"status": "ok"}            (both)
    GET  /stories/jobs/{id}       SELECT the row, as JSON     (floor)
    GET  /stories/jobs/{id}       with HX-Request: the "render floor": one SELECT of the
                                  job and its story (a join), then the app's own card
                                  template (templates/_job_card.html) rendered from that
                                  row in the app's template environment (its filters; no
                                  translations): the same HTML, byte for byte, as
                                  the app's card of a finished job, story text, picture
                                  and all (bench/perf.py checks it).
                                  No middleware, no security headers, no compression, no
                                  ETag: what any server must do to answer that card.
    POST /stories/generate        one committed INSERT, 202   (floor; into floor_jobs, a
                                  copy of story_jobs with its constraints and indexes)
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

import asyncpg
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

if TYPE_CHECKING:
    import jinja2

ROOT = Path(__file__).resolve().parent.parent
FLOOR_POOL_MAX = 7  # the app's DATABASE_POOL_MAX default (app/config.py)
CARD_SQL = (
    "SELECT j.*, s.title, s.screening, s.body, ps.picture_status, ps.picture_error,"
    " ps.picture_etag FROM story_jobs j"
    " LEFT JOIN stories s ON s.id = j.story_id AND s.deleted_at IS NULL"
    " LEFT JOIN story_picture_states ps ON ps.story_id = s.id WHERE j.id = $1")
VERSION_CHARS = 12  # app/web/pictures.py's: the picture's URL carries its ETag's first 12
BLANK_LINES = re.compile(r"\n\s*\n")


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


bare = Starlette(routes=[Route("/healthz", healthz)])


@contextlib.asynccontextmanager
async def _stack_pool(app: Starlette) -> AsyncIterator[None]:
    """What any app on this stack does before it serves: import `databases` (asyncpg,
    SQLAlchemy's core) and connect its pool, one connection open."""
    from databases import Database

    async with Database(os.environ["DATABASE_URL"], min_size=1,
                        max_size=FLOOR_POOL_MAX) as database:
        await database.fetch_val("SELECT 1")
        yield


stack = Starlette(routes=[Route("/healthz", healthz)], lifespan=_stack_pool)


def iso(moment: object) -> str | None:
    return None if moment is None else moment.strftime("%Y-%m-%dT%H:%M:%SZ")  # type: ignore[attr-defined]


async def job(request: Request) -> Response:
    if request.headers.get("hx-request") == "true":
        return await card(request)
    pool: asyncpg.Pool = request.app.state.pool
    row = await pool.fetchrow("SELECT * FROM story_jobs WHERE id = $1",
                              int(request.path_params["job_id"]))
    if row is None:
        return JSONResponse({"error": {"code": "not_found"}}, status_code=404)
    return JSONResponse({
        "job_id": row["id"], "status": row["status"], "story_id": row["story_id"],
        "error": row["error_text"], "created_at": iso(row["created_at"]),
        "started_at": iso(row["started_at"]), "completed_at": iso(row["completed_at"]),
        "text_so_far": row["text_so_far"],
    })


async def card(request: Request) -> Response:
    """The card of a finished job, as the app's poll answers it (see the module's docstring);
    only what that card reads is filled in."""
    pool: asyncpg.Pool = request.app.state.pool
    row = await pool.fetchrow(CARD_SQL, int(request.path_params["job_id"]))
    if row is None:
        return JSONResponse({"error": {"code": "not_found"}}, status_code=404)
    finished = row["status"] in ("completed", "failed")
    job = SimpleNamespace(
        id=row["id"], status=_Status(row["status"], finished), story_id=row["story_id"],
        error_text=row["error_text"], cancel_requested=False, can_finish=False,
        request=SimpleNamespace(prompt=row["prompt"], child_name=row["child_name"],
                                sibling_name=row["sibling_name"],
                                listeners=bool(row["child_name"]), language=row["language"]))
    body = row["body"] or ""
    card = SimpleNamespace(
        job=job, polls=not finished, title=row["title"], screening=row["screening"],
        draft=(None, []), language=row["language"] or "en",
        story=[b.strip() for b in BLANK_LINES.split(body.strip()) if b.strip()],
        picture=picture_frame(row))
    html = request.app.state.cards.get_template("_job_card.html").render(card=card, notice=None,
                                                        csrf_token=None, card_poll_s="3")
    return HTMLResponse(html)


def picture_frame(row: asyncpg.Record) -> SimpleNamespace | None:
    """The story's picture under the card, as the app's card shows it (a drawing app)."""
    if row["story_id"] is None or (row["picture_status"] is None and row["picture_etag"] is None):
        return None
    drawing = row["picture_status"] in ("pending", "running")
    status = "failed" if row["picture_etag"] is None and not drawing else None
    etag = row["picture_etag"]
    return SimpleNamespace(
        picture=SimpleNamespace(drawing=drawing, status=status, error=row["picture_error"],
                                skipped=row["picture_error"] == "over_budget"),
        picture_story_id=row["story_id"], picture_title=row["title"], can_draw=True,
        picture_src=etag and f"/stories/{row['story_id']}/picture?v={etag[:VERSION_CHARS]}",
        picture_key=uuid.uuid4().hex)


class _Status(str):
    """A status that compares as its text and knows whether it is final, as the app's does."""

    finished: bool

    def __new__(cls, value: str, finished: bool) -> _Status:
        status = super().__new__(cls, value)
        status.finished = finished
        return status


async def generate(request: Request) -> Response:
    pool: asyncpg.Pool = request.app.state.pool
    body = json.loads(await request.body())
    key = request.headers.get("idempotency-key") or uuid.uuid4().hex
    job_id = await pool.fetchval(
        "INSERT INTO floor_jobs (idempotency_key, request_hash, prompt, length)"
        " VALUES ($1, $2, $3, $4) RETURNING id",
        key, "-", body["prompt"], body.get("length", "medium"))
    return JSONResponse({"job_id": job_id, "status": "pending",
                         "poll_url": f"/stories/jobs/{job_id}"}, status_code=202)


async def _no_reset(connection: asyncpg.Connection) -> None:
    """Nothing to undo: every statement here is one autocommitted round trip."""


def _cards() -> jinja2.Environment:
    """The app's own card template in the app's environment (its filters, {% trans %}),
    with Jinja2's null translations for the app's: an English card's words as they stand
    in the template, so the request's language costs the floor nothing (the app's must
    cost nothing measurable either). Made by the floor's start-up alone, so the bare
    baseline imports nothing of the app."""
    sys.path.insert(0, str(ROOT))
    from app.web.assets import Assets
    from app.web.templates import STATIC_DIR, make_templates

    assets = Assets(STATIC_DIR)
    cards = make_templates(static=assets.urls, inline=assets.inline).env
    cards.install_null_translations(newstyle=True)  # type: ignore[attr-defined]
    return cards


@contextlib.asynccontextmanager
async def _pool(app: Starlette) -> AsyncIterator[None]:
    app.state.cards = _cards()
    app.state.pool = await asyncpg.create_pool(
        os.environ["DATABASE_URL"], min_size=1, max_size=FLOOR_POOL_MAX, reset=_no_reset)
    await app.state.pool.execute(
        "CREATE TABLE IF NOT EXISTS floor_jobs (LIKE story_jobs INCLUDING ALL)")
    try:
        yield
    finally:
        await app.state.pool.close()


floor = Starlette(
    routes=[
        Route("/healthz", healthz),
        Route("/stories/jobs/{job_id:int}", job),
        Route("/stories/generate", generate, methods=["POST"]),
    ],
    lifespan=_pool,
)
