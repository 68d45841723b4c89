"""Who gets in and what may change things.

`guard.py` makes every decision (app/web/access.py applies them), from the parts:
`clients.py` (the client's address behind proxies, and the host names), `crosssite.py`
(the cross-site rule), `sessions.py` (sessions and device cookies), `limits.py` (the login
limiter), `csrf.py` (CSRF masking), `secret_key.py` (SECRET_KEY or the key kept on disk),
`headers.py` (the headers every response carries). Signing in and out is app/web/login.py.

May use: app.config, app.db, app.queries, app.errors, app.logs. Never app.web, which
answers for it (its refusals are pages or JSON by app/web/negotiation.py).
"""
