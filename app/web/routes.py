"""The one URL table: every path the app answers, and where each is handled.

Routes are tried in order and the first match wins, so the order matters twice: the
busiest come first (a card polls every 3 s), and a fixed path under /stories/ (deleted,
backup.zip, import) comes before /stories/{story_id}, which would otherwise take it and answer 404.

JSON or HTML, one rule for every route (app/web/negotiation.py, `answers_json`): a route
serves either a page or an API resource, and answers in its own kind unless the request
names the other. A page answers HTML, and JSON for `Accept: application/json` on a GET or a
JSON body on a POST. An API resource (/children and below, /healthz) answers JSON, and HTML
for `Accept: text/html` on a GET or a form body on a POST: the child profiles were JSON
only before they had a page, so curl's `GET /children` (`Accept: */*`) gets JSON while its
`GET /stories` gets the library page. Errors and the middleware's refusals follow the same
rule, and are JSON for a client that takes no HTML at all.

Every handler lives in app/web, one module per resource: `jobs` (a job, and healthz),
`generate` (a new job), `unfinished` (stories cut short), `stories` (the library, a story
and its actions, downloads), `children`, `login`, `pages` (home, preferences), `spend` (the
month's spending, and what an open page may no longer spend on), `pictures` (a story's
picture, its place and a redraw), `narrations` (a story read aloud: the audio, its player's
place, asking for it), `backups` (the import form) and `offline` (the service worker).
"""

from __future__ import annotations

from starlette.routing import Route

from app.web import (
    backups,
    children,
    generate,
    jobs,
    login,
    narrations,
    offline,
    pages,
    pictures,
    shares,
    spend,
    stories,
    unfinished,
)
from app.web.assets import Assets


def routes(assets: Assets) -> list[Route]:
    """`assets`: the app's static files, read once by create_app."""
    return [
        # The busiest: the status card's poll, a new story, the platform's health check.
        Route("/stories/jobs/{job_id}", jobs.job_status, methods=["GET"]),
        Route("/stories/generate", generate.generate, methods=["POST"]),
        Route("/healthz", jobs.healthz, methods=["GET"]),
        # The household's pages and their forms.
        Route("/", pages.home, methods=["GET"]),
        Route("/preferences", pages.set_preferences, methods=["POST"]),
        Route("/closed", spend.closed, methods=["GET"]),
        Route("/stories/jobs/{job_id}/retry", jobs.retry, methods=["POST"]),
        Route("/stories/jobs/{job_id}/cancel", jobs.stop, methods=["POST"]),
        Route("/stories/jobs/{job_id}/finish", jobs.finish, methods=["POST"]),
        Route("/stories/jobs/{job_id}/dismiss", unfinished.dismiss, methods=["POST"]),
        Route("/stories/jobs/{job_id}/undismiss", unfinished.undismiss, methods=["POST"]),
        Route("/login", login.login_page, methods=["GET"]),
        Route("/login", login.login, methods=["POST"]),
        Route("/logout", login.logout, methods=["POST"]),
        # The shelf: fixed paths first, then the library and one story (JSON or a page).
        Route("/children", children.children, methods=["GET"]),
        Route("/children", children.add_child, methods=["POST"]),
        Route("/children/bedtime", children.set_bedtime, methods=["POST"]),
        Route("/children/language", children.set_language, methods=["POST"]),
        Route("/children/{child_id}", children.update_child, methods=["POST"]),
        Route("/children/{child_id}/delete", children.remove_child, methods=["POST"]),
        Route("/spend", spend.spend, methods=["GET"]),
        Route("/stories/deleted", stories.recently_deleted, methods=["GET"]),
        Route("/stories/unfinished", unfinished.unfinished, methods=["GET"]),
        Route("/stories/backup.zip", stories.backup_zip, methods=["GET"]),
        Route("/stories/import", backups.import_backup_page, methods=["POST"]),
        Route("/stories", stories.library, methods=["GET"]),
        Route("/stories/{story_id}", stories.story_page, methods=["GET"]),
        Route("/stories/{story_id}/favourite", stories.favourite, methods=["POST"]),
        Route("/stories/{story_id}/delete", stories.delete, methods=["POST"]),
        Route("/stories/{story_id}/restore", stories.restore, methods=["POST"]),
        Route("/stories/{story_id}/markdown", stories.story_markdown_file, methods=["GET"]),
        Route("/stories/{story_id}/picture", pictures.image, methods=["GET"]),
        Route("/stories/{story_id}/picture", pictures.redraw, methods=["POST"]),
        Route("/stories/{story_id}/picture/frame", pictures.frame, methods=["GET"]),
        Route("/stories/{story_id}/narration", narrations.audio, methods=["GET"]),
        Route("/stories/{story_id}/narration", narrations.narrate, methods=["POST"]),
        Route("/stories/{story_id}/narration/frame", narrations.frame, methods=["GET"]),
        Route("/stories/{story_id}/share", shares.make_share, methods=["POST"]),
        Route("/stories/{story_id}/shares", shares.list_shares, methods=["GET"]),
        Route("/stories/{story_id}/shares/{share_id}/revoke", shares.revoke_share,
              methods=["POST"]),
        # Outside the household: no password, GET and HEAD alone (app/web/shares.py).
        Route("/shared/{token}", shares.shared_page, methods=["GET", "HEAD"]),
        Route("/shared/{token}/picture", shares.shared_picture, methods=["GET", "HEAD"]),
        # Offline and static: the service worker, and /static/{path} from memory.
        Route("/sw.js", offline.service_worker(assets), methods=["GET"]),
        Route(offline.OFFLINE_PAGE, offline.offline_page, methods=["GET"]),
        Route(offline.OFFLINE_ALIAS, offline.offline_page, methods=["GET"]),
        *assets.routes(),
    ]
