"""Share links: a story for someone outside the household, at /shared/<token>, opened with
no password; the only code that knows sql/queries/shares.sql's statement names (and the count it
shares with the login limiter, sessions.sql's count_failure).

    shares = ShareStore(db)
    made = await shares.make(story_id, days=30)     # Made (with its token), or None: no story
    await shares.active(story_id)                    # [Share, ...] that still open
    await shares.revoke(story_id, share_id)          # False: no such link, or ended already
    shared = await shares.open(token)                # SharedStory, or None (whatever the reason)

The token is 144 random bits (24 URL-safe characters), shown once, when the link is made;
only its SHA-256 is stored. Every look-up hashes the token and runs one indexed statement,
so an unknown, revoked, expired or deleted story's link takes the same path to the same
nothing. Unknown links looked up from one address are counted (login_failures, scope
'share'): past SHARE_MISSES_MAX in a window, that address waits; no other does.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.queries import Statements

TOKEN_BYTES = 18  # 144 bits: 24 URL-safe characters
TOKEN_CHARS = 24
SHARE_MISSES_MAX = 20  # unknown links an address may look up in a window
SHARE_MISS_WINDOW_S = 10 * 60


@dataclass(frozen=True)
class Share:
    id: int
    story_id: int
    created_at: datetime
    expires_at: datetime


@dataclass(frozen=True)
class Made:
    share: Share
    token: str  # shown once: only its hash is kept

    @property
    def url(self) -> str:
        return shared_url(self.token)


@dataclass(frozen=True)
class SharedStory:
    story_id: int
    title: str
    body: str
    model: str
    first_name: str | None  # who it was for: the first name alone
    picture_etag: str | None
    language: str = "en"


def shared_url(token: str) -> str:
    return f"/shared/{token}"


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


def looks_like_a_token(token: str) -> bool:
    """A token as made here: anything else finds nothing (and costs no look-up)."""
    return len(token) == TOKEN_CHARS and all(c.isascii() and (c.isalnum() or c in "-_")
                                             for c in token)


class ShareStore(Statements):
    async def make(self, story_id: int, *, days: float) -> Made | None:
        token = secrets.token_urlsafe(TOKEN_BYTES)
        row = await self._one("create_share", {"story_id": story_id, "days": float(days),
                                               "token_hash": token_hash(token)})
        return Made(_share(row), token) if row is not None else None

    async def active(self, story_id: int) -> list[Share]:
        return [_share(row) for row in await self._all("active_shares", {"story_id": story_id})]

    async def revoke(self, story_id: int, share_id: int) -> bool:
        row = await self._one("revoke_share", {"story_id": story_id, "share_id": share_id})
        return row is not None

    async def open(self, token: str) -> SharedStory | None:
        row = await self._one("shared_story", {"token_hash": token_hash(token)})
        if row is None:
            return None
        name = (row["child_name"] or "").split()
        return SharedStory(row["id"], row["title"], row["body"], row["model"],
                           name[0] if name else None, row["picture_etag"],
                           row["language"] or "en")

    async def picture(self, token: str) -> tuple[str, bytes, str] | None:
        row = await self._one("shared_picture", {"token_hash": token_hash(token)})
        return (row["content_type"], bytes(row["image"]), row["etag"]) if row else None

    async def misses(self, client: str) -> int:
        return int(await self._val("share_misses", {"client": client[:100]}))

    async def count_miss(self, client: str) -> None:
        await self._val("count_failure", {"scope": "share", "client": client[:100],
                                          "window_s": float(SHARE_MISS_WINDOW_S)})


def _share(row: Any) -> Share:
    return Share(row["id"], row["story_id"], row["created_at"], row["expires_at"])
