-- The invariants `python -m app check` reports on (app/queue/check.py): each query finds
-- the ids of the jobs or stories that break one; none should ever find any.

-- name: check_completed_without_story
-- Invariant: a completed story job points at a story that exists.
SELECT j.id FROM story_jobs j LEFT JOIN stories s ON s.id = j.story_id
 WHERE j.kind = 'story' AND j.status = 'completed' AND s.id IS NULL
 ORDER BY j.id

-- name: check_completed_without_picture
-- Invariant: a completed picture job's story has a picture (its own, or a later redraw's:
-- the picture and the completion are one statement).
SELECT j.id FROM story_jobs j LEFT JOIN story_pictures p ON p.story_id = j.picture_of
 WHERE j.kind = 'picture' AND j.status = 'completed' AND p.story_id IS NULL
 ORDER BY j.id

-- name: check_unreachable_pictures
-- Invariant: a picture drawn here belongs to a completed picture job of its story.
SELECT p.story_id AS id FROM story_pictures p JOIN story_jobs j ON j.id = p.job_id
 WHERE j.status <> 'completed' OR j.kind <> 'picture' OR j.picture_of <> p.story_id
 ORDER BY p.story_id

-- name: check_completed_without_narration
-- Invariant: a completed narration part's story has that part (its own audio, or a later
-- reading's: the audio and the completion are one statement).
SELECT j.id FROM story_jobs j
  LEFT JOIN story_narration_parts p ON p.story_id = j.narration_of AND p.part = j.narration_part
 WHERE j.kind = 'narration' AND j.status = 'completed' AND p.story_id IS NULL
 ORDER BY j.id

-- name: check_unreachable_narrations
-- Invariant: a part read aloud here belongs to a completed narration job of its story and
-- part.
SELECT p.story_id AS id FROM story_narration_parts p JOIN story_jobs j ON j.id = p.job_id
 WHERE j.status <> 'completed' OR j.kind <> 'narration' OR j.narration_of <> p.story_id
    OR j.narration_part <> p.part
 ORDER BY p.story_id

-- name: check_unreachable_stories
-- Invariant: every story is reachable from its job (the job completed with it). A story
-- whose job did not was paid for and is not where the family looks for it.
SELECT s.id FROM stories s JOIN story_jobs j ON j.id = s.job_id
 WHERE j.status <> 'completed' OR j.story_id IS DISTINCT FROM s.id
 ORDER BY s.id

-- name: check_dead_running
-- Invariant: a running job has a live heartbeat (else the sweeper should have failed it),
-- or a response id and no owner with a live heartbeat (it waits to be adopted: no worker
-- is alive to do so) -- the latter only while no process that runs jobs is alive.
SELECT j.id FROM story_jobs j
 WHERE j.status = 'running' AND j.heartbeat_at < now() - make_interval(secs => :stale_s)
   AND (j.response_id IS NULL
        OR EXISTS (SELECT 1 FROM workers w
                    WHERE w.concurrency > 0 AND w.stopped_at IS NULL AND w.gone_at IS NULL
                      AND w.heartbeat_at >= now() - make_interval(secs => :stale_s)))
 ORDER BY j.id

-- name: check_stranded_pending
-- Invariant: a job waiting past the threshold with no worker alive has been expired
-- (allowing one sweep interval for the sweeper to get there).
SELECT id FROM story_jobs
 WHERE status = 'pending'
   AND created_at < now() - make_interval(secs => :threshold_s) - make_interval(secs => :interval_s)
   AND NOT EXISTS (SELECT 1 FROM workers
                    WHERE concurrency > 0
                      AND heartbeat_at >= now() - make_interval(secs => :threshold_s))
 ORDER BY id

-- name: check_expired_while_alive
-- Invariant: no job was expired while a worker was alive to run it (a process that runs
-- jobs had started before, and beat within the threshold of, the moment it expired).
SELECT j.id FROM story_jobs j
 WHERE j.status = 'failed' AND j.error_text = 'expired'
   AND EXISTS (SELECT 1 FROM workers w
                WHERE w.concurrency > 0
                  AND w.started_at <= j.completed_at
                  AND w.heartbeat_at >= j.completed_at - make_interval(secs => :threshold_s))
 ORDER BY j.id

-- name: check_calls_not_in_ledger
-- Jobs over whose one provider call was marked sent (mark_call_sent: it may have reached
-- the provider, and was not refused by it) with no row of their kind in the ledger: a call
-- the budget did not count. Imported jobs made no call, and a job with no meter no row.
SELECT j.id FROM story_jobs j
 WHERE j.status IN ('completed', 'failed') AND j.call_sent_at IS NOT NULL
   AND j.call_model IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM spend s WHERE s.job_id = j.id AND s.kind = j.kind)
 ORDER BY j.id
