"""The one URL table: every path the app answers, and where each is handled.

Routes are tried in order and the first match wins, so the order matters twice: the
busiest come first (a card polls every 3 s), and a fixed path under /stories/ (deleted,
backup.zip, import) comes before /stories/{story_id}, which would otherwise take it and answer 404.
"""

from __future__ import annotations

from starlette.routing import Route

from app.security import login
from app.shelf import routes as shelf
from app.web import backups, children, jobs, pages
from app.web.assets import Assets


def routes(assets: Assets) -> list[Route]:
    """`assets`: the app's static files, read once by create_app."""
    return [
        # The busiest: the status card's poll, a new story, the platform's health check.
        Route("/stories/jobs/{job_id}", jobs.job_status, methods=["GET"]),
        Route("/stories/generate", jobs.generate, methods=["POST"]),
        Route("/healthz", jobs.healthz, methods=["GET"]),
        # The household's pages and their forms.
        Route("/", pages.home, methods=["GET"]),
        Route("/preferences", pages.set_preferences, methods=["POST"]),
        Route("/stories/jobs/{job_id}/retry", pages.retry, methods=["POST"]),
        Route("/stories/jobs/{job_id}/cancel", jobs.stop, methods=["POST"]),
        Route("/stories/jobs/{job_id}/finish", jobs.finish, methods=["POST"]),
        Route("/login", login.login_page, methods=["GET"]),
        Route("/login", login.login, methods=["POST"]),
        Route("/logout", login.logout, methods=["POST"]),
        # The shelf: fixed paths first, then the library and one story (JSON or a page).
        Route("/children", children.children, methods=["GET"]),
        Route("/children", children.add_child, methods=["POST"]),
        Route("/children/{child_id}", children.update_child, methods=["POST"]),
        Route("/children/{child_id}/delete", children.remove_child, methods=["POST"]),
        Route("/stories/deleted", shelf.recently_deleted, methods=["GET"]),
        Route("/stories/backup.zip", shelf.backup_zip, methods=["GET"]),
        Route("/stories/import", backups.import_backup_page, methods=["POST"]),
        Route("/stories", shelf.library, methods=["GET"]),
        Route("/stories/{story_id}", shelf.story_page, methods=["GET"]),
        Route("/stories/{story_id}/favourite", pages.favourite, methods=["POST"]),
        Route("/stories/{story_id}/delete", pages.delete, methods=["POST"]),
        Route("/stories/{story_id}/restore", shelf.restore, methods=["POST"]),
        Route("/stories/{story_id}/markdown", shelf.story_markdown_file, methods=["GET"]),
        # Offline and static: the service worker, and /static/{path} from memory.
        Route("/sw.js", shelf.service_worker(assets), methods=["GET"]),
        *assets.routes(),
    ]
