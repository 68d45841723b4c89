-- Household sessions (password mode): opened at sign-in, renewed by use, ended at
-- sign-out, pruned when unused. And the failed sign-ins that hold a client up.

-- name: create_session
-- A household member signed in on a device.
INSERT INTO sessions (sid) VALUES (:sid)
RETURNING sid

-- name: session_alive
-- Is this signed-in session still open, and used within :max_idle_s? (Signing out ends it
-- on the server.) Its last use is renewed too, but only when it is older than
-- :seen_every_s: this runs on every request, and nearly every one writes nothing.
WITH seen AS (
    UPDATE sessions SET last_seen_at = now()
     WHERE sid = :sid AND ended_at IS NULL
       AND last_seen_at < now() - make_interval(secs => :seen_every_s)
       AND last_seen_at >= now() - make_interval(secs => :max_idle_s)
    RETURNING sid
)
SELECT sid FROM sessions
 WHERE sid = :sid AND ended_at IS NULL
   AND last_seen_at >= now() - make_interval(secs => :max_idle_s)

-- name: end_session
-- Sign out: this session's cookie, wherever it was copied, no longer signs anyone in.
UPDATE sessions SET ended_at = now() WHERE sid = :sid AND ended_at IS NULL
RETURNING sid

-- name: prune_sessions
-- Forget sessions unused for :max_idle_s (signed-out ones stop being used at sign-out).
DELETE FROM sessions WHERE last_seen_at < now() - make_interval(secs => :max_idle_s)
RETURNING sid

-- name: take_login_attempt
-- A device that has never signed in tries a password: the attempt counts, for the whole
-- app and then for its address (only if the app was under :app_max_failures, so a
-- refused address leaves no row), before the password is looked at. Each count, with the
-- seconds left of its window; the caller gives back an attempt past a limit.
WITH app AS (
    INSERT INTO login_failures AS f (scope, client, failures, window_ends_at)
    VALUES ('app', '', 1, now() + make_interval(secs => :app_window_s))
    ON CONFLICT (scope, client) DO UPDATE SET
        failures = CASE WHEN f.window_ends_at <= now() THEN 1 ELSE f.failures + 1 END,
        window_ends_at = CASE WHEN f.window_ends_at <= now() THEN EXCLUDED.window_ends_at
                              ELSE f.window_ends_at END
    RETURNING scope, client, failures, window_ends_at
), address AS (
    INSERT INTO login_failures AS f (scope, client, failures, window_ends_at)
    SELECT 'address', :address, 1, now() + make_interval(secs => :address_window_s)
      FROM app WHERE app.failures <= :app_max_failures
    ON CONFLICT (scope, client) DO UPDATE SET
        failures = CASE WHEN f.window_ends_at <= now() THEN 1 ELSE f.failures + 1 END,
        window_ends_at = CASE WHEN f.window_ends_at <= now() THEN EXCLUDED.window_ends_at
                              ELSE f.window_ends_at END
    RETURNING scope, client, failures, window_ends_at
)
SELECT scope, client, failures, extract(epoch FROM window_ends_at - now())::float8 AS seconds_left
  FROM app
UNION ALL
SELECT scope, client, failures, extract(epoch FROM window_ends_at - now())::float8
  FROM address

-- name: count_failure
-- One more failure counted for one client in one scope, in a fixed window from its first:
-- a device that has signed in before trying a password (scope 'device', counted for that
-- device alone, before the password is looked at: nobody else's failures hold it up), or
-- an address looking up a share link that opens nothing (scope 'share', app/shelf/shares.py).
INSERT INTO login_failures AS f (scope, client, failures, window_ends_at)
VALUES (:scope, :client, 1, now() + make_interval(secs => :window_s))
ON CONFLICT (scope, client) DO UPDATE SET
    failures = CASE WHEN f.window_ends_at <= now() THEN 1 ELSE f.failures + 1 END,
    window_ends_at = CASE WHEN f.window_ends_at <= now() THEN EXCLUDED.window_ends_at
                          ELSE f.window_ends_at END
RETURNING scope, client, failures, extract(epoch FROM window_ends_at - now())::float8 AS seconds_left

-- name: give_back_login_attempt
-- An attempt that was no failure after all (refused before its password was looked at, or
-- the right password) leaves the counts it was taken from. With :forget (the right
-- password), its own address's or device's earlier failures go too; the app's stay.
-- The rows are locked in take_login_attempt's order, the app's first: never a deadlock.
WITH counted AS MATERIALIZED (
    SELECT scope, client FROM login_failures
     WHERE (scope, client) IN (SELECT * FROM unnest(:scopes::text[], :clients::text[]))
     ORDER BY scope = 'app' DESC
       FOR UPDATE
)
UPDATE login_failures AS f
   SET failures = CASE WHEN :forget AND f.scope <> 'app' THEN 0
                       ELSE greatest(f.failures - 1, 0) END
  FROM counted
 WHERE (f.scope, f.client) = (counted.scope, counted.client)
RETURNING f.scope

-- name: prune_login_failures
-- Forget counts that hold nobody up any more: their window is over, or nothing is left.
-- Rows an attempt is counting right now are skipped (the next prune gets them).
DELETE FROM login_failures
 WHERE (scope, client) IN (
    SELECT scope, client FROM login_failures
     WHERE window_ends_at <= now() OR failures = 0
       FOR UPDATE SKIP LOCKED)
RETURNING scope
