-- A story cut short stays in view ("Not finished yet", on the library page and while
-- recent on the home page) until it is finished or the family dismisses it. Dismissing
-- deletes nothing: it only takes the job off those lists (the job page still finishes it).
ALTER TABLE story_jobs ADD COLUMN IF NOT EXISTS dismissed_at timestamptz;

-- The lists read failed story jobs with words kept, not dismissed: few rows among many.
CREATE INDEX IF NOT EXISTS story_jobs_cut_short
    ON story_jobs (id)
 WHERE status = 'failed' AND kind = 'story' AND dismissed_at IS NULL;
