-- Arabic becomes a story language (written right to left), and the household chooses the
-- language of its pages on the Children page.

-- A story, a child's profile and a search in Arabic, as in the other languages.
ALTER TABLE story_jobs DROP CONSTRAINT IF EXISTS story_jobs_language_known;
ALTER TABLE story_jobs ADD CONSTRAINT story_jobs_language_known
    CHECK (language IN ('en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'pl', 'ar'));
ALTER TABLE children DROP CONSTRAINT IF EXISTS children_language_check;
ALTER TABLE children ADD CONSTRAINT children_language_check
    CHECK (language IN ('en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'pl', 'ar'));

CREATE OR REPLACE FUNCTION story_search_config(p_language text) RETURNS regconfig
LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        (SELECT c.oid::regconfig FROM pg_ts_config c
          WHERE c.cfgnamespace = 'pg_catalog'::regnamespace
            AND c.cfgname = CASE p_language
                WHEN 'en' THEN 'english' WHEN 'es' THEN 'spanish' WHEN 'fr' THEN 'french'
                WHEN 'de' THEN 'german' WHEN 'it' THEN 'italian' WHEN 'pt' THEN 'portuguese'
                WHEN 'nl' THEN 'dutch' WHEN 'pl' THEN 'polish' WHEN 'ar' THEN 'arabic' END),
        'simple'::regconfig)
$$;

CREATE OR REPLACE FUNCTION library_stems_query(p_query text) RETURNS tsquery
LANGUAGE sql STABLE SET client_min_messages = warning AS $$
    SELECT string_agg(DISTINCT '(' || stemmed::text || ')', ' | ')::tsquery
      FROM (SELECT to_tsquery(story_search_config(language), p_query) AS stemmed
              FROM unnest(ARRAY['en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'pl', 'ar']) AS language
           ) AS each_language
     WHERE numnode(stemmed) > 0
$$;

-- A library row says its story's language (and model: the demo writes English whatever was
-- asked but Arabic), so its title is shown in that language's direction.
CREATE OR REPLACE VIEW library_rows AS
    SELECT s.id, s.title, s.created_at, s.job_id, s.favourite, s.series_id,
           j.child_name, j.prompt, j.age, j.length, j.sequel_of,
           earlier.title AS sequel_of_title,
           coalesce(array_length(regexp_split_to_array(btrim(s.body), '\s+'), 1), 0) AS words,
           j.sibling_name, j.language, s.model
      FROM stories s
      JOIN story_jobs j ON j.id = s.job_id
      LEFT JOIN shelf_stories earlier ON earlier.id = j.sequel_of;

-- The household's pages' language: NULL until chosen (then each browser's Accept-Language
-- decides); UI_LANGUAGE, when set, comes first (app/i18n/choice.py).
ALTER TABLE household ADD COLUMN IF NOT EXISTS language text
    CONSTRAINT household_language_known
    CHECK (language IN ('en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'pl', 'ar'));
