-- The family's shelf, searchable, with sequels.
--
-- Search: PostgreSQL full-text search over what a story was about (its job's prompt), its
-- title and the child's name, in one generated tsvector column with a GIN index. The
-- `simple` configuration (no stemming, no stop words) suits names and any language. A
-- generated column can only read its own row, so a story keeps copies of its job's prompt
-- and child's name (search_prompt, search_name): a job's request never changes after it
-- is made, so the copies cannot go stale. A trigger fills them on every insert, whoever
-- inserts (the worker, recovery, an import), so no INSERT has to remember them.
--
-- Sequels: a job may continue an earlier story ("What happens next?"). `sequel_of` points
-- at that story (SET NULL when it is purged) and `previously` holds what the storyteller
-- is told about it: its title and characters, never its whole text. Stories of one series
-- share `series_id` (the first story's id), so the library can keep them together.

ALTER TABLE story_jobs ADD COLUMN IF NOT EXISTS sequel_of bigint
    REFERENCES stories (id) ON DELETE SET NULL;
ALTER TABLE story_jobs ADD COLUMN IF NOT EXISTS previously text
    CONSTRAINT story_jobs_previously_short CHECK (length(previously) <= 1000);

ALTER TABLE stories ADD COLUMN IF NOT EXISTS search_prompt text;
ALTER TABLE stories ADD COLUMN IF NOT EXISTS search_name text;
ALTER TABLE stories ADD COLUMN IF NOT EXISTS series_id bigint;

UPDATE stories s
   SET search_prompt = j.prompt, search_name = j.child_name, series_id = s.id
  FROM story_jobs j
 WHERE j.id = s.job_id AND s.series_id IS NULL;

ALTER TABLE stories ALTER COLUMN series_id SET NOT NULL;

CREATE OR REPLACE FUNCTION stories_copy_request() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- The job's request, and the series of the story it continues (else a series of its own).
    SELECT j.prompt, j.child_name, coalesce(earlier.series_id, NEW.id)
      INTO NEW.search_prompt, NEW.search_name, NEW.series_id
      FROM story_jobs j
      LEFT JOIN stories earlier ON earlier.id = j.sequel_of
     WHERE j.id = NEW.job_id;
    NEW.series_id := coalesce(NEW.series_id, NEW.id);
    RETURN NEW;
END
$$;

DROP TRIGGER IF EXISTS stories_copy_request ON stories;
CREATE TRIGGER stories_copy_request BEFORE INSERT ON stories
    FOR EACH ROW EXECUTE FUNCTION stories_copy_request();

ALTER TABLE stories ADD COLUMN IF NOT EXISTS search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple', coalesce(title, '')), 'A')
    || setweight(to_tsvector('simple', coalesce(search_name, '')), 'A')
    || setweight(to_tsvector('simple', coalesce(search_prompt, '')), 'B')
) STORED;

CREATE INDEX IF NOT EXISTS stories_search ON stories USING gin (search);
CREATE INDEX IF NOT EXISTS stories_series ON stories (series_id);

-- Deleted stories wait 30 days in "recently deleted", then the sweeper purges them.
CREATE INDEX IF NOT EXISTS stories_deleted ON stories (deleted_at)
    WHERE deleted_at IS NOT NULL;
