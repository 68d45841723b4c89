-- Every statement that reads or writes a job or a story. The status transitions are all
-- here: each is an UPDATE guarded by the status it expects, ending in RETURNING id, so no
-- row back means another writer got there first and this one changed nothing.

-- name: intake_job
-- (new) -> pending, one intake at a time (the function: sql/functions/intake_job.sql; the
-- request as JSON, its columns by name: app/requests.py's to_params): one
-- row, with the job the idempotency key made already (replayed; for a finish, also the job
-- of another key that finishes the same story), or the job made now, or no job (id NULL)
-- when the queue bound, the day's limit or the month's budget refused it, with the counts
-- (and, with a budget, the month's money) that did.
-- Autocommitted on its own: the intake lock is held until the new job is committed.
SELECT (i.job).*, i.replayed, i.pending, i.used_today, i.spent_micros,
       i.set_aside_micros AS month_set_aside_micros,
       CASE WHEN (i.job).status = 'pending' AND NOT i.replayed THEN i.pending + 1
       END AS position
  FROM intake_job(CAST(:request AS jsonb), :idempotency_key, :request_hash,
                  :since, :queue_max, :daily_limit, :lock_key,
                  CAST(:budget_micros AS bigint), CAST(:month_start AS timestamptz)) AS i

-- name: get_job
-- One job by id; while pending, also its place in line (1 = next to be claimed).
SELECT j.*,
       CASE WHEN j.status = 'pending' THEN
           (SELECT count(*) FROM story_jobs ahead
             WHERE ahead.status = 'pending' AND ahead.kind = j.kind
               AND (ahead.created_at, ahead.id) <= (j.created_at, j.id))
       END AS position
  FROM story_jobs j
 WHERE j.id = :job_id

-- name: get_job_for_card
-- One job by id as its status card shows it, in one round trip: get_job's row, and its
-- story's title, where the story's screening stands (NULL: shown) and, unless flagged, its
-- text and model, as story_for_card reads them (story_title NULL: no story, or deleted),
-- and where its picture stands (story_picture_states' columns).
SELECT j.*,
       CASE WHEN j.status = 'pending' THEN
           (SELECT count(*) FROM story_jobs ahead
             WHERE ahead.status = 'pending' AND ahead.kind = j.kind
               AND (ahead.created_at, ahead.id) <= (j.created_at, j.id))
       END AS position,
       s.title AS story_title, s.screening AS story_screening, s.model AS story_model,
       CASE WHEN s.screening IS DISTINCT FROM 'flagged' THEN s.body END AS story_body,
       -- Running, and its owner is known not to be writing it: stopped, found gone, or
       -- silent for :quiet_s (the sweeper waits for the job's own heartbeat to go stale).
       (j.status = 'running' AND NOT EXISTS (
           SELECT 1 FROM workers w
            WHERE w.boot_id = j.claimed_by AND w.stopped_at IS NULL AND w.gone_at IS NULL
              AND w.heartbeat_at >= now() - make_interval(secs => :quiet_s))) AS owner_lost,
       ps.picture_job_id, ps.picture_status, ps.picture_error, ps.picture_etag,
       ps.picture_small_etag
  FROM story_jobs j
  LEFT JOIN stories s ON s.id = j.story_id AND s.deleted_at IS NULL
  LEFT JOIN story_picture_states ps ON ps.story_id = s.id
 WHERE j.id = :job_id

-- name: get_job_by_key
-- The job an idempotency key made, if any.
SELECT * FROM story_jobs WHERE idempotency_key = :idempotency_key

-- name: finishing_job_id
-- The job that finishes this one's story cut short, if any (at most one: migration 018).
SELECT id FROM story_jobs WHERE finish_of = :job_id

-- name: count_jobs_since
-- Jobs created since a moment (the household's midnight), for the daily limit. A job that
-- failed without ever being claimed (expired in line) never reached the model, and an
-- imported one was asked for somewhere else: neither is counted.
SELECT count(*) FROM story_jobs
 WHERE created_at >= :since AND NOT (status = 'failed' AND started_at IS NULL)
   AND NOT imported AND kind = 'story'

-- name: count_pending
-- Stories waiting in the whole database (every process's), for QUEUE_MAX and /healthz.
SELECT count(*) FROM story_jobs WHERE status = 'pending' AND kind = 'story'

-- name: claim_next_job
-- pending -> running: an idle worker takes the oldest waiting job of the first of :kinds
-- that has one (the kinds it can make, in app/kinds.py's claim order: a picture only when
-- no story waits, so a picture never delays a story), stamping its boot id and the kind it
-- took the job for (migration 039's CHECK). A kind not in :kinds (pictures with
-- ILLUSTRATOR=off here, a kind a newer release added) waits for a process that makes it.
-- SKIP LOCKED lets workers in any number of processes claim side by side; the outer
-- status guard makes a claim that lost a race a no-op (no row back: nothing to run).
-- With :defer_s (a worker that can adopt), no new job is taken while a story paid for
-- already has no live owner (handed over, its owner found gone) or one that missed beats
-- for that long: it is adopted now or soon, and comes first.
UPDATE story_jobs
   SET status = 'running', started_at = now(), heartbeat_at = now(), claimed_by = :boot_id,
       claimed_kind = kind
 WHERE id = (SELECT id FROM story_jobs
              WHERE status = 'pending' AND kind = ANY (CAST(:kinds AS text[]))
                AND NOT (:defer_s::float8 IS NOT NULL AND EXISTS (
                    SELECT 1 FROM story_jobs orphan
                     WHERE orphan.status = 'running' AND orphan.response_id IS NOT NULL
                       AND orphan.claimed_by IS DISTINCT FROM :boot_id
                       AND (orphan.claimed_by IS NULL
                            OR orphan.heartbeat_at < now() - make_interval(secs => :defer_s)
                            OR orphan.claimed_by IN (SELECT boot_id FROM workers
                                                      WHERE gone_at IS NOT NULL))))
              ORDER BY array_position(CAST(:kinds AS text[]), kind), created_at, id
              FOR UPDATE SKIP LOCKED
              LIMIT 1)
   AND status = 'pending'
RETURNING *

-- name: adopt_job
-- running (no change of status): a live worker takes over a job whose story is being
-- written at the provider (it has a response id) and that has no live owner: handed
-- over at a shutdown, its owner found gone (its pid no longer alive on its host), or its
-- owner missed its beats for :stale_s. It follows the same response by its id: never a
-- second billed request, so a live owner judged dead too soon costs nothing (its next
-- save finds the job gone and it stops). Oldest first; they come before pending jobs.
UPDATE story_jobs
   SET claimed_by = :boot_id, heartbeat_at = now()
 WHERE id = (SELECT id FROM story_jobs
              WHERE status = 'running' AND response_id IS NOT NULL
                AND (claimed_by IS NULL
                     OR heartbeat_at < now() - make_interval(secs => :stale_s)
                     OR claimed_by IN (SELECT boot_id FROM workers WHERE gone_at IS NOT NULL))
                AND claimed_by IS DISTINCT FROM :boot_id
              ORDER BY started_at, id
              FOR UPDATE SKIP LOCKED
              LIMIT 1)
   AND status = 'running' AND response_id IS NOT NULL
   AND (claimed_by IS NULL OR heartbeat_at < now() - make_interval(secs => :stale_s)
        OR claimed_by IN (SELECT boot_id FROM workers WHERE gone_at IS NOT NULL))
RETURNING *

-- name: save_response_id
-- running (no change): the provider accepted the job's one billed request; from now on
-- the story can be had by this id, from any process. Saved once, by the claiming worker.
UPDATE story_jobs
   SET response_id = :response_id, heartbeat_at = now()
 WHERE id = :job_id AND status = 'running' AND claimed_by = :boot_id
   AND response_id IS NULL
RETURNING id, cancel_requested_at IS NOT NULL AS cancel_requested

-- name: mark_call_sent
-- running (no change): the job's one provider call is about to be sent, at this model
-- and price (:price NULL: unpriced). From now on it may have reached the provider, so
-- whatever ends the job without the call's own ledger row charges it (fail_job, the
-- sweep). Only while the job is ours; no row back: not ours, so no call is made.
UPDATE story_jobs
   SET call_sent_at = now(), call_model = :model, call_price = CAST(:price AS jsonb),
       heartbeat_at = now()
 WHERE id = :job_id AND status = 'running' AND claimed_by = :boot_id
RETURNING id, cancel_requested_at IS NOT NULL AS cancel_requested

-- name: beat_heartbeat
-- running (no change): the worker is alive and still waiting for the storyteller. The
-- answer says whether the family asked to stop it (where LISTEN is off, this is how the
-- worker hears it).
UPDATE story_jobs
   SET heartbeat_at = now()
 WHERE id = :job_id AND status = 'running' AND claimed_by = :boot_id
RETURNING id, cancel_requested_at IS NOT NULL AS cancel_requested

-- name: save_text_so_far
-- running (no change): the story as streamed so far, with the provider's sequence number
-- of its last event (background mode; NULL keeps the one saved); also the heartbeat.
UPDATE story_jobs
   SET text_so_far = :text_so_far, heartbeat_at = now(),
       response_sequence = coalesce(:sequence, response_sequence)
 WHERE id = :job_id AND status = 'running' AND claimed_by = :boot_id
RETURNING id, cancel_requested_at IS NOT NULL AS cancel_requested

-- name: release_job
-- running (no change of status): hand a job over at shutdown. The owner lets go of a job
-- whose story goes on at the provider, saving its text and sequence number; the NOTIFY
-- (at commit) wakes an idle worker in any process to adopt it at once.
WITH released AS (
    UPDATE story_jobs
       SET claimed_by = NULL, text_so_far = :text_so_far,
           response_sequence = coalesce(:sequence, response_sequence)
     WHERE id = :job_id AND status = 'running' AND claimed_by = :boot_id
       AND response_id IS NOT NULL
    RETURNING id
)
SELECT id, pg_notify('story_jobs', id::text) FROM released

-- name: request_cancel
-- running (no change): the family asked to stop it. Its owner, in whichever process,
-- hears the NOTIFY (or sees the flag at its next heartbeat), stops the story at the
-- provider and fails the job 'stopped'.
WITH asked AS (
    UPDATE story_jobs
       SET cancel_requested_at = coalesce(cancel_requested_at, now())
     WHERE id = :job_id AND status = 'running'
    RETURNING id
)
SELECT id, pg_notify('story_jobs_cancel', id::text) FROM asked

-- name: cancel_pending_job
-- pending -> failed ('stopped'): stopped before any worker took it; never sent.
UPDATE story_jobs
   SET status = 'failed', error_text = 'stopped', completed_at = now()
 WHERE id = :job_id AND status = 'pending'
RETURNING id

-- name: insert_story
-- Stores a written story, once per job, only while the job is the caller's: running and
-- claimed by it, or given up as 'interrupted' while it was claimed by it (a worker cut off
-- from the database, alive all along), and not completed yet. A retry returns the id of
-- the first insert; NULL means the job is not the caller's (adopted, cancelled, or
-- completed by recovery). It beats the heartbeat in the same statement, taking the job's
-- row lock first, so a sweep can never judge the job dead between the story landing and
-- the job completing. :usage_estimated: its tokens were counted here (the provider
-- reported none), as its ledger row says. :screening is NULL (shown) or 'pending' (hidden until screened).
-- The call that wrote it goes in the ledger (`spend`) in the same statement, once: only
-- with the story's first insert (:cost_micros NULL: no meter, no row).
WITH ours AS (
    UPDATE story_jobs SET heartbeat_at = now()
     WHERE id = :job_id AND claimed_by = :boot_id AND story_id IS NULL
       AND (status = 'running' OR (status = 'failed' AND error_text = 'interrupted'))
    RETURNING id
), inserted AS (
    INSERT INTO stories (job_id, title, body, model, prompt_tokens, completion_tokens,
                         usage_estimated, screening)
    SELECT id, :title, :body, :model, :prompt_tokens, :completion_tokens,
           coalesce(CAST(:usage_estimated AS boolean), false), :screening
      FROM ours
    ON CONFLICT (job_id) DO NOTHING
    RETURNING id, job_id
), charged AS (
    INSERT INTO spend (job_id, kind, child_name, model, input_tokens, cached_tokens,
                       output_tokens, images, price, cost_micros, estimated)
    SELECT inserted.job_id, CAST(:spend_kind AS text), :spend_child, :spend_model, :input_tokens,
           :cached_tokens, :output_tokens, :images, CAST(:price AS jsonb), :cost_micros,
           :estimated
      FROM inserted WHERE CAST(:cost_micros AS bigint) IS NOT NULL
    ON CONFLICT (job_id, kind) WHERE job_id IS NOT NULL DO NOTHING
)
SELECT id FROM inserted
UNION ALL
SELECT s.id FROM stories s JOIN ours ON s.job_id = ours.id
LIMIT 1

-- name: complete_job
-- running -> completed, pointing at its story, by the worker that owns it; or failed
-- ('interrupted') -> completed by the worker that still owned it when it was given up
-- (alive, but cut off from the database): a paid story always reaches its job.
UPDATE story_jobs
   SET status = 'completed', story_id = :story_id, error_text = NULL,
       completed_at = now(), text_so_far = ''
 WHERE id = :job_id AND claimed_by = :boot_id AND story_id IS NULL
   AND (status = 'running' OR (status = 'failed' AND error_text = 'interrupted'))
RETURNING id

-- name: fail_job
-- running -> failed, by its owner, with its failure's code (app/failures.py; the full
-- error goes to the log), keeping the words written so far (:text_so_far; NULL keeps the
-- saved ones). Never once its story is stored: that job is completed. A job the family asked
-- to stop ends 'stopped', never 'interrupted' (a shutdown or a lost response that came
-- before its owner heard the stop): what they see is what they asked for. A call that
-- may have reached the provider (marked sent: mark_call_sent) though nothing was stored
-- of it (stopped, past its time, cut off, its answer refused) goes in the ledger in the
-- same statement, once, as the sweep below charges one: its set-aside, estimated, at
-- the model and price it was sent at (unpriced: 0). Not with :refused: the provider
-- answered the request with an error status, so it wrote and billed nothing (the mark is
-- cleared: no call of it reached the provider's bill).
WITH failed AS (
    UPDATE story_jobs
       SET status = 'failed', completed_at = now(),
           error_text = CASE WHEN :error_text = 'interrupted' AND cancel_requested_at IS NOT NULL
                             THEN 'stopped' ELSE :error_text END,
           text_so_far = coalesce(:text_so_far, text_so_far),
           call_sent_at = CASE WHEN CAST(:refused AS boolean) THEN NULL ELSE call_sent_at END
     WHERE id = :job_id AND status = 'running' AND claimed_by = :boot_id
       AND NOT EXISTS (SELECT 1 FROM stories WHERE job_id = :job_id)
    RETURNING id, kind, child_name, set_aside_micros, call_sent_at, call_model, call_price
), charged AS (
    INSERT INTO spend (job_id, kind, child_name, model, price, cost_micros, estimated)
    SELECT id, kind, child_name, call_model, call_price,
           CASE WHEN call_price IS NULL THEN 0 ELSE set_aside_micros END, true
      FROM failed WHERE call_sent_at IS NOT NULL AND call_model IS NOT NULL
    ON CONFLICT (job_id, kind) WHERE job_id IS NOT NULL DO NOTHING
)
SELECT id FROM failed

-- name: sweep_dead_running
-- running -> completed, or running -> failed ('interrupted', or 'stopped' when the
-- family had asked to stop it): its process died, judged by the job's stale heartbeat or
-- by its owner found gone (its pid no longer alive on its host). A story it had already
-- stored was paid for: the job completes with it. Otherwise, when the provider never said
-- it accepted the request (no response id), the story will not come and the job fails,
-- keeping the words written so far. A job with a response id is left to be adopted: its
-- story goes on at the provider. A job (story or picture) whose call was marked sent may
-- have been billed for it: its call goes in the ledger in the same statement, once, as
-- fail_job charges a call cut off: its set-aside, estimated, at the model and price it was
-- sent at (unpriced: 0).
WITH swept AS (
    UPDATE story_jobs
       SET status = CASE WHEN stored.id IS NULL THEN 'failed' ELSE 'completed' END,
           story_id = stored.id,
           error_text = CASE WHEN stored.id IS NOT NULL THEN NULL
                             WHEN story_jobs.cancel_requested_at IS NOT NULL THEN 'stopped'
                             ELSE 'interrupted' END,
           text_so_far = CASE WHEN stored.id IS NULL THEN story_jobs.text_so_far ELSE '' END,
           completed_at = now()
      FROM story_jobs dead
      LEFT JOIN stories stored ON stored.job_id = dead.id
     WHERE story_jobs.id = dead.id
       AND story_jobs.status = 'running'
       AND (story_jobs.heartbeat_at < now() - make_interval(secs => :stale_s)
            OR story_jobs.claimed_by IN (SELECT boot_id FROM workers WHERE gone_at IS NOT NULL))
       AND (dead.response_id IS NULL OR stored.id IS NOT NULL)
    RETURNING story_jobs.id, story_jobs.status, story_jobs.error_text, story_jobs.kind,
              story_jobs.child_name, story_jobs.set_aside_micros, story_jobs.call_sent_at,
              story_jobs.call_model, story_jobs.call_price
), charged AS (
    INSERT INTO spend (job_id, kind, child_name, model, price, cost_micros, estimated)
    SELECT id, kind, child_name, call_model, call_price,
           CASE WHEN call_price IS NULL THEN 0 ELSE set_aside_micros END, true
      FROM swept
     WHERE status = 'failed' AND call_sent_at IS NOT NULL AND call_model IS NOT NULL
    ON CONFLICT (job_id, kind) WHERE job_id IS NOT NULL DO NOTHING
)
SELECT id, status, error_text FROM swept

-- name: sweep_expired_pending
-- pending -> failed ('expired'): waited past the threshold while no worker was alive to
-- run it (no process that runs jobs has beaten within the threshold). With a live
-- worker, a queue of any depth drains instead.
UPDATE story_jobs
   SET status = 'failed', error_text = 'expired', completed_at = now()
 WHERE status = 'pending'
   AND created_at < now() - make_interval(secs => :threshold_s)
   AND NOT EXISTS (SELECT 1 FROM workers
                    WHERE concurrency > 0
                      AND heartbeat_at >= now() - make_interval(secs => :threshold_s))
RETURNING id

-- name: seconds_until_next_stale
-- When the oldest heartbeat of another process's running job goes stale, in seconds.
SELECT extract(epoch FROM min(heartbeat_at) + make_interval(secs => :stale_s) - now())::float8
  FROM story_jobs
 WHERE status = 'running' AND claimed_by IS DISTINCT FROM :boot_id AND response_id IS NULL

-- name: queue_capacity
-- Jobs being written now, and the job slots of the live processes that run jobs (for a
-- waiting job's estimate). Not the waiting job itself: a worker may have claimed it since
-- its card was read, and it is then no job ahead of it.
SELECT (SELECT count(*) FROM story_jobs
         WHERE status = 'running' AND id IS DISTINCT FROM :besides) AS running,
       (SELECT coalesce(sum(concurrency), 0) FROM workers
         WHERE concurrency > 0 AND stopped_at IS NULL AND gone_at IS NULL
           AND heartbeat_at >= now() - make_interval(secs => :stale_s))::int AS slots

-- name: recent_jobs
-- Unfinished jobs and those finished in the last few minutes, newest first; while
-- pending, each with its place in line. Not imported ones: they are no request of ours;
-- no pictures: they are shown with their stories.
-- (Every pending job is in the selection, so counting along it gives the place in line.)
SELECT j.*,
       CASE WHEN j.status = 'pending' THEN
           count(*) FILTER (WHERE j.status = 'pending')
               OVER (ORDER BY j.created_at, j.id ROWS UNBOUNDED PRECEDING)
       END AS position
  FROM story_jobs j
 WHERE NOT j.imported AND j.kind = 'story'
   AND (j.status IN ('pending', 'running')
        OR j.completed_at > now() - make_interval(secs => :recent_s))
 ORDER BY j.id DESC
 LIMIT :limit

-- name: last_request
-- The newest job's request: the form's defaults, so a parent can tap once (not an
-- imported job's: that was asked for somewhere else).
SELECT * FROM story_jobs WHERE NOT imported AND kind = 'story' ORDER BY id DESC LIMIT 1

-- The stories a job makes: purged with their jobs (screened after they are stored:
-- screening.sql; a backup's restored with a job of their own: imports.sql).

-- name: purge_deleted_stories
-- Deleted more than :keep_s ago: gone for good, the story and the completed job that made
-- it (one statement, so the job never points at a missing story). Sequels that continued
-- a purged story keep their place; their link back is cleared (ON DELETE SET NULL).
WITH gone AS (
    DELETE FROM stories
     WHERE deleted_at < now() - make_interval(secs => :keep_s)
    RETURNING id, job_id
)
DELETE FROM story_jobs
 WHERE id IN (SELECT job_id FROM gone) AND status = 'completed'
RETURNING story_id AS id

