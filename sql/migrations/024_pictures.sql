-- A story's picture is a job too: a row of story_jobs with kind 'picture' and the story it
-- draws (picture_of), moved by the same guarded statements as a story. Its request columns
-- are its story's request (who it was for, what they like: the demo illustrator draws
-- from them); it never has a story_id of its own, and it is completed by storing its
-- picture (story_pictures), in the one statement that completes it.
ALTER TABLE story_jobs
    ADD COLUMN kind text NOT NULL DEFAULT 'story'
        CONSTRAINT story_jobs_kind_known CHECK (kind IN ('story', 'picture')),
    ADD COLUMN picture_of bigint REFERENCES stories (id) ON DELETE CASCADE,
    -- The kind its claimer took it for. The release before pictures claims any waiting
    -- job as a story: the CHECK below makes that claim of a picture fail, so a deploy's
    -- old release can never write a story for a picture job (a second billed story).
    ADD COLUMN claimed_kind text;

ALTER TABLE story_jobs
    DROP CONSTRAINT completed_has_story,
    ADD CONSTRAINT completed_has_story
        CHECK (kind <> 'story' OR (status = 'completed') = (story_id IS NOT NULL)),
    ADD CONSTRAINT picture_draws_a_story
        CHECK ((kind = 'picture') = (picture_of IS NOT NULL)
               AND (kind = 'story' OR story_id IS NULL)),
    ADD CONSTRAINT picture_claimed_as_picture
        CHECK (kind = 'story' OR started_at IS NULL OR claimed_kind IS NOT DISTINCT FROM 'picture');

-- A story's picture jobs, newest first (the pages' and cards' look-up, and the cascade).
CREATE INDEX story_jobs_pictures ON story_jobs (picture_of, id) WHERE picture_of IS NOT NULL;

-- One picture at a time for a story: a second request while one waits or is drawn fails
-- on this index, whoever makes it (the redraw's 409).
CREATE UNIQUE INDEX story_jobs_one_picture_at_a_time
    ON story_jobs (picture_of) WHERE kind = 'picture' AND status IN ('pending', 'running');

-- The picture a story shows: the newest drawn (a redraw replaces it once it is ready), or
-- the one its backup brought (job_id NULL). `small` is the library's and the shelf's, made
-- once when it is stored.
CREATE TABLE story_pictures (
    story_id bigint PRIMARY KEY REFERENCES stories (id) ON DELETE CASCADE,
    job_id bigint UNIQUE REFERENCES story_jobs (id) ON DELETE SET NULL,
    content_type text NOT NULL CONSTRAINT story_pictures_type_known CHECK (
        content_type IN ('image/png', 'image/webp', 'image/jpeg', 'image/svg+xml')),
    image bytea NOT NULL CONSTRAINT story_pictures_image_bounded
        CHECK (octet_length(image) BETWEEN 1 AND 4194304),
    small_type text NOT NULL CONSTRAINT story_pictures_small_type_known CHECK (
        small_type IN ('image/png', 'image/webp', 'image/jpeg', 'image/svg+xml')),
    small bytea NOT NULL CONSTRAINT story_pictures_small_bounded
        CHECK (octet_length(small) BETWEEN 1 AND 65536),
    model text NOT NULL,
    -- Validators, made by the database from the bytes themselves.
    etag text GENERATED ALWAYS AS (md5(image)) STORED,
    small_etag text GENERATED ALWAYS AS (md5(small)) STORED,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Where each story's picture stands: its newest picture job (none: never asked for) and the
-- picture stored, by its validators (none yet: NULL). Joined by the queries that read a
-- story for a page or a card anyway, so showing the picture costs no round trip of its own.
CREATE VIEW story_picture_states AS
SELECT s.id AS story_id, j.id AS picture_job_id, j.status AS picture_status,
       j.error_text AS picture_error, p.etag AS picture_etag,
       p.small_etag AS picture_small_etag
  FROM stories s
  LEFT JOIN LATERAL (SELECT id, status, error_text FROM story_jobs
                      WHERE picture_of = s.id
                      ORDER BY id DESC LIMIT 1) j ON true
  LEFT JOIN story_pictures p ON p.story_id = s.id;
