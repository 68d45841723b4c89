-- A story cut short stays in view ("Not finished yet", on the library page and while
-- recent on the home page) until it is finished or the family dismisses it. Dismissing
-- deletes nothing: it only takes the job off those lists (the job page still finishes it).
ALTER TABLE story_jobs ADD COLUMN IF NOT EXISTS dismissed_at timestamptz;

-- The lists read failed story jobs with words kept, not dismissed: few rows among many.
CREATE INDEX IF NOT EXISTS story_jobs_cut_short
    ON story_jobs (id)
 WHERE status = 'failed' AND kind = 'story' AND dismissed_at IS NULL;

-- A title's direction follows its story's language (never its first letter): the library's
-- rows say the language asked for and the model that wrote it (the demo writes English).
CREATE OR REPLACE VIEW library_rows AS
    SELECT s.id, s.title, s.created_at, s.job_id, s.favourite, s.series_id,
           j.child_name, j.prompt, j.age, j.length, j.sequel_of,
           earlier.title AS sequel_of_title,
           coalesce(array_length(regexp_split_to_array(btrim(s.body), '\s+'), 1), 0) AS words,
           j.sibling_name, j.language, s.model
      FROM stories s
      JOIN story_jobs j ON j.id = s.job_id
      LEFT JOIN shelf_stories earlier ON earlier.id = j.sequel_of;
