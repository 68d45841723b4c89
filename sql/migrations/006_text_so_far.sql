-- The story as it is being written: the worker saves the streamed text every second or
-- two (a guarded UPDATE on the running row that doubles as its heartbeat), so the status
-- card can show the words as they come. Emptied when the job completes with its story.
ALTER TABLE story_jobs ADD COLUMN IF NOT EXISTS text_so_far text NOT NULL DEFAULT '';
