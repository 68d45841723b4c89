"""Who gets in and what may change things.

`middleware.py` composes the parts: `clients.py` (the client's address behind proxies,
and the host names), `crosssite.py` (the cross-site rule), `sessions.py` (sessions and
the login limiter), `headers.py` (the headers every response carries).

May use: app.config, app.db, app.queries, app.errors, app.logs, and app.web's responses
for its refusals. Nothing imports it but app.main.
"""
