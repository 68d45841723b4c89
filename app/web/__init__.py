"""HTTP: the URL table, every handler, the middleware, templates, static files, compression.

`routes.py` is the one URL table, and says which module handles each path: one per
resource (`jobs`, `generate`, `stories`, `children`, `login`, `pages`, `backups`,
`offline`). How the app answers: `negotiation.py` the one rule for JSON or HTML,
`templates.py` pages and fragments, `preferences.py` the reader's theme cookies,
`inputs.py` bodies read safely, `errors.py` every error in the contract's shape or as a
page; `cards.py` the status card's view; `access.py` the middleware applying the Guard;
`assets.py` the static files from memory; `compression.py` compressed pages and JSON.

May use every part below it: app.queue, app.shelf, app.security, app.money, app.storytelling
(what the provider lacks), app.narrating (a story cut into the parts it is read in),
app.stories, app.languages, app.lengths, app.failures,
app.kinds, app.requests, app.finishing, app.ideas, app.dates, app.i18n, app.config, app.db,
app.errors, app.logs, app.version, and app.services (for its type). None of them imports it. The
lifespan (app.main) hands it the running services; it never builds them.
"""
