-- Library search by the stems of words too (issue 29): "snails" finds a story about a
-- snail, "dragons" one with a dragon, in the story's own language. Beside the prefixes of
-- migration 007's `search` (the `simple` configuration, which stems nothing: "snai" and
-- "runn" still find "snail" and "running"), `search_stems` holds the same title, names and
-- request stemmed by the text search configuration of the story's language. A search
-- matches either (sql/queries/shelf.sql, search_library_words). The embedded PostgreSQL
-- has no pg_trgm, so stems, PostgreSQL's own, are used rather than trigrams.

-- The text search configuration for a story language (its tag, as story_jobs.language);
-- `simple` (no stemming) for one this server has no configuration for (Polish, here).
CREATE OR REPLACE FUNCTION story_search_config(p_language text) RETURNS regconfig
LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        (SELECT c.oid::regconfig FROM pg_ts_config c
          WHERE c.cfgnamespace = 'pg_catalog'::regnamespace
            AND c.cfgname = CASE p_language
                WHEN 'en' THEN 'english' WHEN 'es' THEN 'spanish' WHEN 'fr' THEN 'french'
                WHEN 'de' THEN 'german' WHEN 'it' THEN 'italian' WHEN 'pt' THEN 'portuguese'
                WHEN 'nl' THEN 'dutch' WHEN 'pl' THEN 'polish' END),
        'simple'::regconfig)
$$;

-- A search's words (a to_tsquery text of `word:*` prefixes joined by `&`) stemmed as each
-- story language stems them, as one query (one GIN index scan): a story matches when its
-- stems hold them stemmed in its own language, or, rarely, in another. NULL when every word is a
-- stop word everywhere ("the"): the prefixes alone answer then. No notice for one that is.
CREATE OR REPLACE FUNCTION library_stems_query(p_query text) RETURNS tsquery
LANGUAGE sql STABLE SET client_min_messages = warning AS $$
    SELECT string_agg(DISTINCT '(' || stemmed::text || ')', ' | ')::tsquery
      FROM (SELECT to_tsquery(story_search_config(language), p_query) AS stemmed
              FROM unnest(ARRAY['en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'pl']) AS language
           ) AS each_language
     WHERE numnode(stemmed) > 0
$$;

ALTER TABLE stories ADD COLUMN IF NOT EXISTS search_config regconfig NOT NULL DEFAULT 'simple';
UPDATE stories s SET search_config = story_search_config(j.language)
  FROM story_jobs j
 WHERE j.id = s.job_id AND s.search_config IS DISTINCT FROM story_search_config(j.language);
ALTER TABLE stories ADD COLUMN IF NOT EXISTS search_stems tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector(search_config, coalesce(title, '')), 'A') ||
    setweight(to_tsvector(search_config, coalesce(search_name, '')), 'A') ||
    setweight(to_tsvector(search_config, coalesce(search_prompt, '')), 'B')) STORED;
CREATE INDEX IF NOT EXISTS stories_search_stems ON stories USING gin (search_stems);

-- The shelf's view, with the new columns (at the end, as CREATE OR REPLACE VIEW needs).
CREATE OR REPLACE VIEW shelf_stories AS
    SELECT * FROM stories WHERE deleted_at IS NULL AND screening IS NULL;

-- A new story copies its language's configuration from its job too (as migration 017's,
-- with it).
CREATE OR REPLACE FUNCTION stories_copy_request() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- The job's request, and the series of the story it continues (else a series of its own).
    SELECT j.prompt, nullif(concat_ws(' ', j.child_name, j.sibling_name), ''),
           coalesce(earlier.series_id, NEW.id), story_search_config(j.language)
      INTO NEW.search_prompt, NEW.search_name, NEW.series_id, NEW.search_config
      FROM story_jobs j
      LEFT JOIN stories earlier ON earlier.id = j.sequel_of
     WHERE j.id = NEW.job_id;
    NEW.series_id := coalesce(NEW.series_id, NEW.id);
    NEW.search_config := coalesce(NEW.search_config, 'simple'::regconfig);
    RETURN NEW;
END
$$;
