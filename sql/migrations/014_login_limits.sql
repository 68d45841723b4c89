-- Failed sign-ins, counted here so that every process (uvicorn's WEB_CONCURRENCY workers,
-- several web processes) shares one count, and sessions that expire by disuse (issue 20).
--
-- login_failures: one row per thing counted, each in a fixed window that starts with its
-- first failure and ends at window_ends_at (then the count starts again from one):
--   scope 'address': a device that has never signed in, by its client address;
--   scope 'app':     every such device together (client ''), so guessing from many
--                    addresses is limited too;
--   scope 'device':  a device that has signed in before, by its device cookie's id. It is
--                    counted on its own, never held up by the other two.
-- An attempt counts from the moment it is made (so no number of attempts sent at once gets
-- past a limit); a refused attempt or the right password gives it back. Rows whose window
-- is over, or whose count came back to zero, are pruned.
CREATE TABLE IF NOT EXISTS login_failures (
    scope          text NOT NULL CHECK (scope IN ('address', 'app', 'device')),
    client         text NOT NULL CHECK (length(client) <= 100),
    failures       integer NOT NULL CHECK (failures >= 0),
    window_ends_at timestamptz NOT NULL,
    PRIMARY KEY (scope, client)
);

-- A session lasts while it is used: last_seen_at is renewed by use (at most every few
-- minutes) and pruning goes by it, not by created_at. Sessions open now start their month
-- today, so nobody is signed out by the upgrade.
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS last_seen_at timestamptz NOT NULL DEFAULT now();
