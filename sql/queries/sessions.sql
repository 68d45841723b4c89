-- Household sessions (password mode): opened at sign-in, renewed by use, ended at
-- sign-out, pruned when old.

-- name: create_session
-- A household member signed in on a device.
INSERT INTO sessions (sid) VALUES (:sid)
RETURNING sid

-- name: session_alive
-- Is this signed-in session still open? (Signing out ends it on the server.)
SELECT sid FROM sessions WHERE sid = :sid AND ended_at IS NULL

-- name: end_session
-- Sign out: this session's cookie, wherever it was copied, no longer signs anyone in.
UPDATE sessions SET ended_at = now() WHERE sid = :sid AND ended_at IS NULL
RETURNING sid

-- name: prune_sessions
-- Forget sessions past the cookie's own lifetime.
DELETE FROM sessions WHERE created_at < now() - make_interval(secs => :max_age_s)
RETURNING sid

-- The shelf, continued: undo and purge, sequels, backups. Stories, not job states: the
-- one job write here (an import) is an insert and a guarded running -> completed.
