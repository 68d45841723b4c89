-- Stories cut short and not finished yet: failed story jobs with words kept, listed until
-- they are finished or the family dismisses them (migration 033). app/queue/unfinished.py.

-- name: unfinished_jobs
-- Newest first: every failed story job with words kept (its own, or those it was given to
-- carry on from, when a finish failed before a word of its own), not dismissed (or, with
-- :dismissed, only those dismissed: the library's, to bring back), and not finished
-- already: no job carries on from it (that job is on the lists, or its story on the
-- shelf). Failed since :since (NULL: ever); holding every word of :words (lowercased) in
-- its words, its idea or the children's names (an empty array: all).
SELECT j.*
  FROM story_jobs j
 WHERE j.status = 'failed' AND j.kind = 'story'
   AND (j.dismissed_at IS NULL AND NOT CAST(:dismissed AS boolean)
        OR j.dismissed_at IS NOT NULL AND CAST(:dismissed AS boolean))
   AND (btrim(j.text_so_far) <> '' OR btrim(coalesce(j.carried_text, '')) <> '')
   AND NOT EXISTS (SELECT 1 FROM story_jobs f WHERE f.finish_of = j.id)
   AND (CAST(:since AS timestamptz) IS NULL
        OR coalesce(j.completed_at, j.created_at) >= CAST(:since AS timestamptz))
   AND NOT EXISTS (
       SELECT 1 FROM unnest(CAST(:words AS text[])) AS word
        WHERE strpos(lower(concat_ws(' ', j.text_so_far, j.carried_text, j.prompt,
                                     j.child_name, j.sibling_name)), word) = 0)
 ORDER BY j.id DESC
 LIMIT :limit

-- name: dismiss_job
-- Takes a failed story job off the "Not finished yet" lists; nothing is deleted. A second
-- dismiss finds it dismissed already: the same answer. No row: no such failed job.
UPDATE story_jobs SET dismissed_at = coalesce(dismissed_at, now())
 WHERE id = :job_id AND status = 'failed' AND kind = 'story'
RETURNING id

-- name: undismiss_job
-- Undo a dismiss: the failed story job is back on the "Not finished yet" lists. Once or
-- again: the same answer. No row: no such failed job.
UPDATE story_jobs SET dismissed_at = NULL
 WHERE id = :job_id AND status = 'failed' AND kind = 'story'
RETURNING *

-- name: dismissed_job
-- A failed story job the family dismissed (its Undo is offered); no row: none such.
SELECT id FROM story_jobs
 WHERE id = :job_id AND status = 'failed' AND kind = 'story' AND dismissed_at IS NOT NULL
