"""The family's shelf: the library, undo, favourites, sequels, downloads and backups.

`routes.py` serves the library and its actions, `sequels.py` builds "another like this"
and "what happens next", `backup.py` exports and imports the whole shelf,
and `scheduled.py` writes one
into BACKUP_DIR every BACKUP_EVERY_H (its turns claimed in `schedule.py`, its files kept by
`backup_files.py`).

May use: app.queue (the store's story reads and writes), app.stories, app.dates,
app.errors, app.db and app.logs, and the web helpers (app.web.responses, app.web.assets)
for its pages.
"""
