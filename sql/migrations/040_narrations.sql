-- A story read aloud is a narration: a stored story's text read in parts (a long story is
-- too long for one call), each part a job of its own, a row of story_jobs with kind
-- 'narration', the story it reads (narration_of), which part of how many, and the words it
-- reads. Moved by the same guarded statements as every job; completed by storing its audio
-- (story_narration_parts) in the one statement that completes it.
ALTER TABLE story_jobs DROP CONSTRAINT IF EXISTS story_jobs_kind_known;
ALTER TABLE story_jobs ADD CONSTRAINT story_jobs_kind_known
    CHECK (kind IN ('story', 'picture', 'narration'));
ALTER TABLE spend DROP CONSTRAINT IF EXISTS spend_kind_known;
ALTER TABLE spend ADD CONSTRAINT spend_kind_known
    CHECK (kind IN ('story', 'picture', 'narration', 'moderation'));

ALTER TABLE story_jobs
    ADD COLUMN IF NOT EXISTS narration_of bigint REFERENCES stories (id) ON DELETE CASCADE,
    ADD COLUMN IF NOT EXISTS narration_part integer,
    ADD COLUMN IF NOT EXISTS narration_parts integer,
    ADD COLUMN IF NOT EXISTS narration_text text;

ALTER TABLE story_jobs DROP CONSTRAINT IF EXISTS narration_reads_a_story;
ALTER TABLE story_jobs ADD CONSTRAINT narration_reads_a_story CHECK (
    (kind = 'narration') = (narration_of IS NOT NULL)
    AND (kind <> 'narration' OR (narration_parts BETWEEN 1 AND 100
                                 AND narration_part >= 0 AND narration_part < narration_parts
                                 AND length(narration_text) BETWEEN 1 AND 5000)));

-- A story's narration jobs, newest first (the pages' look-up, and the cascade).
CREATE INDEX IF NOT EXISTS story_jobs_narrations ON story_jobs (narration_of, id)
    WHERE narration_of IS NOT NULL;

-- One job at a time for a part: a second request while one waits or is read fails here,
-- whoever makes it (the 409 narration_in_progress is said before, under the intake lock).
CREATE UNIQUE INDEX IF NOT EXISTS story_jobs_one_narration_part_at_a_time
    ON story_jobs (narration_of, narration_part)
    WHERE kind = 'narration' AND status IN ('pending', 'running');

-- The parts read aloud: the whole narration is parts 0 .. parts - 1 of one reading (all
-- with the same `parts`), joined in order (MP3 frames follow one another cleanly). A part
-- is kept with the digest of the words it reads, so asking again reads only the parts
-- missing. job_id NULL: brought by a backup.
CREATE TABLE IF NOT EXISTS story_narration_parts (
    story_id bigint NOT NULL REFERENCES stories (id) ON DELETE CASCADE,
    part integer NOT NULL,
    parts integer NOT NULL CONSTRAINT story_narration_parts_counted
        CHECK (parts BETWEEN 1 AND 100 AND part >= 0 AND part < parts),
    job_id bigint UNIQUE REFERENCES story_jobs (id) ON DELETE SET NULL,
    text_md5 text NOT NULL,
    content_type text NOT NULL CONSTRAINT story_narration_parts_type_known CHECK (
        content_type IN ('audio/mpeg', 'audio/ogg', 'audio/wav', 'audio/aac')),
    audio bytea NOT NULL CONSTRAINT story_narration_parts_audio_bounded
        CHECK (octet_length(audio) BETWEEN 1 AND 8388608),
    seconds numeric(9, 2) NOT NULL CONSTRAINT story_narration_parts_seconds_bounded
        CHECK (seconds > 0 AND seconds < 3600),
    model text NOT NULL,
    voice text NOT NULL,
    etag text GENERATED ALWAYS AS (md5(audio)) STORED,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (story_id, part)
);

-- A narration part's failures (app/failures.py's NARRATION_FAILURES), beside the others.
ALTER TABLE story_jobs DROP CONSTRAINT IF EXISTS story_jobs_error_known;
ALTER TABLE story_jobs ADD CONSTRAINT story_jobs_error_known CHECK (error_text IN (
    'storyteller_failed', 'storyteller_busy', 'storyteller_timeout',
    'storyteller_unreachable', 'storyteller_unreadable', 'storyteller_empty',
    'key_refused', 'model_unavailable', 'declined', 'cut_short', 'stopped',
    'interrupted', 'expired', 'not_saved', 'internal',
    'illustrator_failed', 'illustrator_busy', 'illustrator_timeout',
    'illustrator_unreachable', 'illustrator_unreadable', 'illustrator_empty',
    'picture_unshowable', 'picture_declined', 'picture_model_unavailable',
    'pictures_unsupported', 'pictures_off', 'story_gone', 'over_budget',
    'narrator_failed', 'narrator_busy', 'narrator_timeout', 'narrator_unreachable',
    'narrator_unreadable', 'narration_unplayable', 'narration_model_unavailable',
    'narration_unsupported', 'narrations_off'));
