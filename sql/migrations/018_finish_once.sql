-- A story cut short is finished at most once: at most one job carries on from a job's kept
-- words (finish_of), whatever the idempotency keys. The intake (sql/functions/
-- intake_job.sql) answers a second finish with the first finishing job under its lock;
-- this index makes a second one impossible for any writer.
--
-- Jobs made before it may finish one job several times over (a key each). The one kept as
-- the finishing job is the first that has a story, else the first made; the others keep
-- everything (their words, their status, their story on the shelf, what they cost) but the
-- link finish_of, which only says "this one finished that one". So no story is lost and no
-- job deleted, and the failed job's card leads to one finished story. Their carried_text
-- stays: a pending one still writes its story from the words it was given.
--
-- Job writes wait for this transaction (a moment), so that none makes a duplicate between
-- the clean-up and the index; reads go on.
LOCK TABLE story_jobs IN SHARE ROW EXCLUSIVE MODE;

WITH ranked AS (
    SELECT id, row_number() OVER (PARTITION BY finish_of
                                  ORDER BY story_id IS NULL, created_at, id) AS place
      FROM story_jobs
     WHERE finish_of IS NOT NULL
)
UPDATE story_jobs SET finish_of = NULL
  FROM ranked
 WHERE story_jobs.id = ranked.id AND ranked.place > 1;

CREATE UNIQUE INDEX IF NOT EXISTS story_jobs_finish_of_once
    ON story_jobs (finish_of) WHERE finish_of IS NOT NULL;
