-- Share links (migration 026): made, listed and revoked by the household; looked up by
-- the token's hash from /shared/<token> (app/shelf/shares.py).

-- name: create_share
-- A new link to a story that is not deleted; no row: no such story.
INSERT INTO story_shares (story_id, token_hash, expires_at)
SELECT s.id, :token_hash, now() + make_interval(secs => :days::float8 * 86400)
  FROM stories s WHERE s.id = :story_id AND s.deleted_at IS NULL
RETURNING id, story_id, created_at, expires_at

-- name: active_shares
-- A story's links that still open, oldest first.
SELECT id, story_id, created_at, expires_at FROM story_shares
 WHERE story_id = :story_id AND revoked_at IS NULL AND expires_at > now()
 ORDER BY id

-- name: revoke_share
-- A link ends now; no row: no such link of this story, or ended already.
UPDATE story_shares SET revoked_at = now()
 WHERE id = :share_id AND story_id = :story_id AND revoked_at IS NULL
RETURNING id

-- name: shared_story
-- What a link shows, by its token's hash: one indexed look-up whatever the token, so an
-- unknown, revoked or expired link, or one whose story was deleted, takes the same path
-- and finds the same nothing.
SELECT s.id, s.title, s.body, s.model, j.child_name, j.language, ps.picture_etag
  FROM story_shares sh
  JOIN stories s ON s.id = sh.story_id AND s.deleted_at IS NULL
  JOIN story_jobs j ON j.id = s.job_id
  LEFT JOIN story_picture_states ps ON ps.story_id = s.id
 WHERE sh.token_hash = :token_hash AND sh.revoked_at IS NULL AND sh.expires_at > now()

-- name: shared_picture
-- A shared story's picture (its own address under /shared/<token>), by the token's hash.
SELECT p.content_type, p.image, p.etag
  FROM story_shares sh
  JOIN stories s ON s.id = sh.story_id AND s.deleted_at IS NULL
  JOIN story_pictures p ON p.story_id = s.id
 WHERE sh.token_hash = :token_hash AND sh.revoked_at IS NULL AND sh.expires_at > now()

-- name: share_misses
-- How many unknown links this address looked up in its window (0: none, or it is over);
-- each is counted by sessions.sql's count_failure, scope 'share'.
SELECT coalesce((SELECT failures FROM login_failures
                  WHERE scope = 'share' AND client = :client AND window_ends_at > now()), 0)
