-- A sibling story: one story for two of the household's children (issue 21).
--
-- sibling_name, sibling_age: the second child, copied from their profile when the story
-- was asked for (like likes), so a profile edited later changes no story.
-- likes: a sibling story weaves in both children's favourite things, each profile's (at
-- most 200 characters) joined by "; ", so the bound is theirs together.
ALTER TABLE story_jobs ADD COLUMN IF NOT EXISTS sibling_name text
    CONSTRAINT story_jobs_sibling_name_short CHECK (length(sibling_name) BETWEEN 1 AND 40);
ALTER TABLE story_jobs ADD COLUMN IF NOT EXISTS sibling_age integer
    CONSTRAINT story_jobs_sibling_age_range CHECK (sibling_age BETWEEN 1 AND 12);
ALTER TABLE story_jobs ADD CONSTRAINT story_jobs_sibling_age_has_name
    CHECK (sibling_age IS NULL OR sibling_name IS NOT NULL);
ALTER TABLE story_jobs DROP CONSTRAINT IF EXISTS story_jobs_likes_short;
ALTER TABLE story_jobs ADD CONSTRAINT story_jobs_likes_short
    CHECK (length(likes) BETWEEN 1 AND 402);

-- A library row says whom the story was for: both children of a sibling story.
CREATE OR REPLACE VIEW library_rows AS
    SELECT s.id, s.title, s.created_at, s.job_id, s.favourite, s.series_id,
           j.child_name, j.prompt, j.age, j.length, j.sequel_of,
           earlier.title AS sequel_of_title,
           coalesce(array_length(regexp_split_to_array(btrim(s.body), '\s+'), 1), 0) AS words,
           j.sibling_name
      FROM stories s
      JOIN story_jobs j ON j.id = s.job_id
      LEFT JOIN shelf_stories earlier ON earlier.id = j.sequel_of;

-- The library finds a sibling story by either child's name (as migration 007's, with it).
CREATE OR REPLACE FUNCTION stories_copy_request() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- The job's request, and the series of the story it continues (else a series of its own).
    SELECT j.prompt, nullif(concat_ws(' ', j.child_name, j.sibling_name), ''),
           coalesce(earlier.series_id, NEW.id)
      INTO NEW.search_prompt, NEW.search_name, NEW.series_id
      FROM story_jobs j
      LEFT JOIN stories earlier ON earlier.id = j.sequel_of
     WHERE j.id = NEW.job_id;
    NEW.series_id := coalesce(NEW.series_id, NEW.id);
    RETURN NEW;
END
$$;
