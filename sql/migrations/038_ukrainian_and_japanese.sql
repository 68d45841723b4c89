-- Ukrainian and Japanese become story languages (and so page languages). Every column that
-- names a language takes the tags of the languages' records (app/languages.py), which
-- tests/test_vocabulary.py compares with sql/schema.sql's CHECKs: a language added to the
-- records and not here fails the suite, not a family's request.

ALTER TABLE story_jobs DROP CONSTRAINT IF EXISTS story_jobs_language_known;
ALTER TABLE story_jobs ADD CONSTRAINT story_jobs_language_known
    CHECK (language IN ('en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'pl', 'ar', 'uk', 'ja'));
ALTER TABLE children DROP CONSTRAINT IF EXISTS children_language_check;
ALTER TABLE children ADD CONSTRAINT children_language_check
    CHECK (language IN ('en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'pl', 'ar', 'uk', 'ja'));
ALTER TABLE household DROP CONSTRAINT IF EXISTS household_language_known;
ALTER TABLE household ADD CONSTRAINT household_language_known
    CHECK (language IN ('en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'pl', 'ar', 'uk', 'ja'));

-- A search in every story language: this server has no text search configuration for
-- Ukrainian or Japanese (story_search_config gives them `simple`, as it does Polish).
CREATE OR REPLACE FUNCTION library_stems_query(p_query text) RETURNS tsquery
LANGUAGE sql STABLE SET client_min_messages = warning AS $$
    SELECT string_agg(DISTINCT '(' || stemmed::text || ')', ' | ')::tsquery
      FROM (SELECT to_tsquery(story_search_config(language), p_query) AS stemmed
              FROM unnest(ARRAY['en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'pl', 'ar', 'uk',
                                'ja']) AS language
           ) AS each_language
     WHERE numnode(stemmed) > 0
$$;

-- A library row says how long its story is to read aloud: by its words, or, in a language
-- that puts no spaces between them (Japanese), by its characters, spaces apart.
CREATE OR REPLACE VIEW library_rows AS
    SELECT s.id, s.title, s.created_at, s.job_id, s.favourite, s.series_id,
           j.child_name, j.prompt, j.age, j.length, j.sequel_of,
           earlier.title AS sequel_of_title,
           coalesce(array_length(regexp_split_to_array(btrim(s.body), '\s+'), 1), 0) AS words,
           j.sibling_name, j.language, s.model,
           length(regexp_replace(s.body, '\s', '', 'g')) AS characters
      FROM stories s
      JOIN story_jobs j ON j.id = s.job_id
      LEFT JOIN shelf_stories earlier ON earlier.id = j.sequel_of;
