"""HTTP: the URL table, the handlers, the templates' helpers, static files, compression.

`routes.py` is the one URL table; `jobs.py` generate, a job's status and healthz;
`cards.py` the status card's view; `pages.py` the household's own pages; `backups.py`
restoring a backup from the library page; `responses.py`
how the app answers (JSON or HTML, errors in the contract's shape, bodies read safely);
`assets.py` the static files from memory; `compression.py` compressed pages and JSON.

May use: app.queue, app.shelf, app.stories, app.dates, app.errors, app.logs (and the URL
table every handler, app.security's login included). The lifespan (app.main) hands it the
running services; it never builds them.
"""
