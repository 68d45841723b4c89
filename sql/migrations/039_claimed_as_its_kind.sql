-- A job of any kind but a story is claimed only as its own kind. Migration 024's CHECK named
-- the picture (claimed_kind = 'picture'), so each new kind would have had to write it again;
-- this one reads the kind from the row. A release claims only the kinds it can make
-- (claim_next_job's :kinds, app/kinds.py) and stamps claimed_kind; the release before
-- pictures stamped none, and its claim of any other kind still fails here.
ALTER TABLE story_jobs DROP CONSTRAINT IF EXISTS picture_claimed_as_picture;
ALTER TABLE story_jobs DROP CONSTRAINT IF EXISTS claimed_as_its_kind;
ALTER TABLE story_jobs ADD CONSTRAINT claimed_as_its_kind
    CHECK (kind = 'story' OR started_at IS NULL OR claimed_kind IS NOT DISTINCT FROM kind);
