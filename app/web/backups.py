"""Restore a backup from the library page: the "Import a backup" form, beside the download.

    POST /stories/import     multipart: the zip in `backup`

The same import as `python -m app import FILE` (app/shelf/backup.py), whole or not at all:
a file refused writes nothing and the page says why in the command line's own words (422,
the form again); a restored file says how many stories, and child profiles, came back.
Cross-site posts are refused before this runs (app/web/access.py).
"""

from __future__ import annotations

from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException
from starlette.formparsers import MultiPartException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Message

from app.errors import BadRequest, ClientGone, TooLarge
from app.i18n import N_, gettext, ngettext
from app.shelf.archive import BACKUP_MAX_BYTES, MIB, BackupError
from app.shelf.imports import ImportResult, import_backup
from app.web.inputs import services_of
from app.web.negotiation import VARY
from app.web.templates import render

# The upload: no larger than the stories.json a backup may hold (a zip is smaller). Files
# past 1 MB are spooled to a temporary file by the form parser, not kept in memory.
IMPORT_MAX_BYTES = BACKUP_MAX_BYTES
UPLOAD_FIELD = "backup"


# A refused file, in the family's words; what exactly was wrong (the command line's own
# words) follows on the page, for whoever set the app up.
NOT_A_BACKUP = N_("This file can't be restored, so nothing was changed. Choose a backup "
                  "made by “Download all stories” in this app, as it was downloaded.")
TOO_LARGE = N_("This file is too large to be a backup of this app (at most %(most)d MB), so "
               "nothing was changed. Choose the .zip that “Download all stories” made.")


async def import_backup_page(request: Request) -> Response:
    try:
        form = await _upload_form(request)
    except TooLarge as error:  # the same page as any other refusal, with its own status
        return _refused(request, gettext(TOO_LARGE) % {"most": IMPORT_MAX_BYTES // MIB},
                        error.message, status_code=413)
    try:
        upload = form.get(UPLOAD_FIELD)
        if not isinstance(upload, UploadFile) or not upload.filename or not upload.size:
            return _refused(request, "Choose a backup file (a .zip) to restore.")
        try:
            result = await import_backup(services_of(request).db, upload.file)
        except BackupError as error:
            return _refused(request, gettext(NOT_A_BACKUP), str(error))
    finally:
        await form.close()
    context = {"page_title": N_("Backup restored"), "restored": restored_sentence(result)}
    return render(request, "import.html", context, headers=VARY)


def _refused(request: Request, refusal: str, detail: str | None = None, *,
             status_code: int = 422) -> Response:
    context = {"page_title": N_("Nothing was restored"), "refusal": refusal, "detail": detail}
    return render(request, "import.html", context, status_code=status_code, headers=VARY)


def restored_sentence(result: ImportResult) -> str:
    """"3 stories came back (2 were here already), and 1 child profile.\""""
    sentence = ngettext("%(num)d story came back", "%(num)d stories came back",
                        result.restored) % {"num": result.restored}
    if result.already_here:
        sentence += ngettext(" (%(num)d was here already)", " (%(num)d were here already)",
                             result.already_here) % {"num": result.already_here}
    if result.children_restored:
        sentence += ngettext(", and %(num)d child profile", ", and %(num)d child profiles",
                             result.children_restored) % {"num": result.children_restored}
    return sentence + "."


async def _upload_form(request: Request) -> FormData:
    """The multipart form, its body counted as it arrives: past IMPORT_MAX_BYTES it is
    refused (413) and whatever was spooled is closed."""
    too_large = TooLarge(f"A backup to restore must be at most {IMPORT_MAX_BYTES // MIB} MB.")
    declared = request.headers.get("content-length", "")
    if declared.isdecimal() and int(declared) > IMPORT_MAX_BYTES:
        raise too_large
    received = 0

    async def counted() -> Message:
        nonlocal received
        message = await request.receive()
        received += len(message.get("body", b""))
        if received > IMPORT_MAX_BYTES:
            raise too_large
        return message

    try:
        return await Request(request.scope, counted).form(max_files=1, max_fields=8)
    except ClientDisconnect:  # the tab was closed mid-upload
        raise ClientGone("The client left before its request arrived.") from None
    except (MultiPartException, HTTPException):  # not a multipart form, or a broken one
        raise BadRequest(N_("The form could not be read: send the backup as a file upload."),
                         code="malformed_form") from None
