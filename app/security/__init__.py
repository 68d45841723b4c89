"""Who gets in and what may change things.

`guard.py` makes every decision and `middleware.py` applies them, from the parts:
`clients.py` (the client's address behind proxies, and the host names), `crosssite.py`
(the cross-site rule), `sessions.py` (sessions, device cookies and the login limiter),
`headers.py` (the headers every response carries). `login.py` signs in and out.

May use: app.config, app.db, app.queries, app.errors, app.logs, and app.web's responses
for its refusals. Only app.main and the URL table import it.
"""
