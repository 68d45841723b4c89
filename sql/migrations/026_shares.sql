-- Share links (a story for someone outside the household): a read-only page at
-- /shared/<token>, opened with no password. Only the token's SHA-256 is kept, never the
-- token: a copy of the database opens nothing. A link ends when it expires (SHARE_DAYS),
-- when it is revoked, and when its story is deleted (revoked then, so a restore does not
-- bring it back); backups carry none.
CREATE TABLE story_shares (
    id bigserial PRIMARY KEY,
    story_id bigint NOT NULL REFERENCES stories (id) ON DELETE CASCADE,
    token_hash bytea NOT NULL UNIQUE CONSTRAINT story_shares_hash_is_sha256
        CHECK (octet_length(token_hash) = 32),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz
);
CREATE INDEX story_shares_of_story ON story_shares (story_id, id);

-- Look-ups of unknown links, counted per client address in the login limiter's table
-- (scope 'share'), so guessing is bounded; never for the whole app, so nobody guessing
-- from elsewhere can keep a real link's reader out.
ALTER TABLE login_failures DROP CONSTRAINT login_failures_scope_check,
    ADD CONSTRAINT login_failures_scope_check
        CHECK (scope IN ('address', 'app', 'device', 'share'));
