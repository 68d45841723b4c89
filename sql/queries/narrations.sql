-- A story read aloud: its parts' jobs (kind 'narration', claimed, swept and failed by
-- jobs.sql's statements) and the parts stored (story_narration_parts). The function that
-- makes the jobs: sql/functions/insert_narration_jobs.sql.

-- name: insert_narration_jobs
-- (new) -> pending, for each part of the story not read aloud yet, under the intake lock and
-- set aside against the month (:budget_micros); `outcome` says what was made, or why not.
SELECT i.outcome, i.job_ids, i.spent, i.set_aside
  FROM insert_narration_jobs(:story_id, :key, CAST(:texts AS text[]),
                             CAST(:set_asides AS bigint[]), CAST(:columns AS text[]),
                             CAST(:budget_micros AS bigint), CAST(:month_start AS timestamptz),
                             :lock_key) AS i

-- name: complete_narration_part
-- running -> completed, or failed ('interrupted') -> completed by the worker that still
-- owned it (alive, cut off from the database: the part was paid for), storing its audio in
-- the same statement (replacing that part of an earlier reading; the parts of a reading cut
-- into another number of parts go), with its call in the ledger (`spend`), once. No row:
-- not ours any more (nothing stored).
WITH done AS (
    UPDATE story_jobs
       SET status = 'completed', error_text = NULL, completed_at = now()
     WHERE id = :job_id AND kind = 'narration' AND claimed_by = :boot_id
       AND (status = 'running' OR (status = 'failed' AND error_text = 'interrupted'))
    RETURNING id, narration_of, narration_part, narration_parts, narration_text
), charged AS (
    INSERT INTO spend (job_id, kind, child_name, model, input_tokens, cached_tokens,
                       output_tokens, images, price, cost_micros, estimated)
    SELECT id, CAST(:spend_kind AS text), :spend_child, :spend_model, :input_tokens,
           :cached_tokens, :output_tokens, :images, CAST(:price AS jsonb), :cost_micros,
           :estimated
      FROM done WHERE CAST(:cost_micros AS bigint) IS NOT NULL
    ON CONFLICT (job_id, kind) WHERE job_id IS NOT NULL DO NOTHING
), other_reading AS (
    DELETE FROM story_narration_parts p USING done
     WHERE p.story_id = done.narration_of AND p.parts <> done.narration_parts
       AND p.part <> done.narration_part
)
INSERT INTO story_narration_parts (story_id, part, parts, job_id, text_md5, content_type,
                                   audio, seconds, model, voice)
SELECT narration_of, narration_part, narration_parts, id, md5(narration_text),
       :content_type, :audio, :seconds, :model, :voice FROM done
ON CONFLICT (story_id, part) DO UPDATE
   SET parts = EXCLUDED.parts, job_id = EXCLUDED.job_id, text_md5 = EXCLUDED.text_md5,
       content_type = EXCLUDED.content_type, audio = EXCLUDED.audio,
       seconds = EXCLUDED.seconds, model = EXCLUDED.model, voice = EXCLUDED.voice,
       created_at = now()
RETURNING story_id AS id

-- name: narration_state
-- Where a story's narration stands: its parts stored (all of one reading: a whole narration
-- when there are `parts` of them), their seconds and one validator for them all, and its
-- parts' jobs waiting, being read, or failed with their part still missing. No row: no
-- such story (or deleted).
SELECT s.id AS story_id,
       (SELECT count(*) FROM story_narration_parts p WHERE p.story_id = s.id) AS stored,
       (SELECT max(p.parts) FROM story_narration_parts p WHERE p.story_id = s.id) AS parts,
       (SELECT sum(p.seconds) FROM story_narration_parts p WHERE p.story_id = s.id) AS seconds,
       (SELECT md5(string_agg(p.etag, ',' ORDER BY p.part)) FROM story_narration_parts p
         WHERE p.story_id = s.id) AS etag,
       (SELECT count(*) FROM story_jobs j WHERE j.narration_of = s.id
           AND j.status = 'pending') AS pending,
       (SELECT count(*) FROM story_jobs j WHERE j.narration_of = s.id
           AND j.status = 'running') AS running,
       (SELECT count(*) FROM story_jobs j WHERE j.narration_of = s.id AND j.status = 'failed'
           AND NOT EXISTS (SELECT 1 FROM story_narration_parts p
                            WHERE p.story_id = s.id AND p.part = j.narration_part
                              AND p.parts = j.narration_parts)) AS failed
  FROM stories s
 WHERE s.id = :story_id AND s.deleted_at IS NULL

-- name: narration_audio
-- A story's narration to serve: its parts in order (all of one reading).
SELECT p.part, p.parts, p.content_type, p.audio, p.etag
  FROM story_narration_parts p JOIN stories s ON s.id = p.story_id
 WHERE p.story_id = :story_id AND s.deleted_at IS NULL
 ORDER BY p.part

-- name: narration_source
-- What a narration part reads: the story is still there.
SELECT s.id FROM stories s WHERE s.id = :story_id AND s.deleted_at IS NULL
