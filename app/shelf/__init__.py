"""The family's shelf: the library, undo, favourites, sequels, downloads and backups.

`store.py` keeps the stories, `sequels.py` builds "another like this"
and "what happens next", `backup.py` exports and checks the whole shelf, `imports.py` restores one,
and `scheduled.py` writes one
into BACKUP_DIR every BACKUP_EVERY_H (its turns claimed in `schedule.py`, its files kept by
`backup_files.py`).

May use: app.queue (the store's story reads and writes), app.stories, app.languages,
app.lengths, app.requests, app.dates, app.i18n, app.ideas (the form's ideas), app.errors,
app.db, app.queries, app.illustrating (a picture's checks), app.narrating (a narration's
checks) and app.logs. Never app.web: its
pages are app/web/stories.py.
"""
