-- The household's shelf: a story can be marked a favourite, and removed from the library.
-- Removal is soft (deleted_at), because a completed job keeps pointing at its story
-- (story_jobs.story_id, CHECK completed <=> story_id set); a removed story is never shown.
ALTER TABLE stories ADD COLUMN IF NOT EXISTS favourite boolean NOT NULL DEFAULT false;
ALTER TABLE stories ADD COLUMN IF NOT EXISTS deleted_at timestamptz;

-- The library: favourites first, then newest, over the stories still on the shelf.
CREATE INDEX IF NOT EXISTS stories_shelf ON stories (favourite DESC, created_at DESC)
    WHERE deleted_at IS NULL;
