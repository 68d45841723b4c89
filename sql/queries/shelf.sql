-- The shelf: stories on it, found, starred, deleted and restored, sequels, the export. The
-- shelf store's alone; none of these writes a job (screening, the purge and a backup's
-- import are the job store's, in jobs.sql).

-- name: get_story
-- One story still on the shelf (not deleted, not hidden by screening), with the job that
-- made it (its row as JSON, whose request columns app/requests.py reads) and, for a
-- sequel, the earlier story's title while that is on the shelf.
SELECT s.*, to_jsonb(j) AS job, earlier.title AS sequel_of_title
  FROM shelf_stories s JOIN story_jobs j ON j.id = s.job_id
  LEFT JOIN shelf_stories earlier ON earlier.id = j.sequel_of
 WHERE s.id = :story_id

-- name: list_stories
-- The stories on the shelf, newest first (the JSON library and the home page); :limit
-- NULL for all of them.
SELECT s.id, s.title, s.created_at, s.job_id, s.favourite, j.child_name, j.sibling_name,
       j.language, s.model
  FROM shelf_stories s JOIN story_jobs j ON j.id = s.job_id
 ORDER BY s.created_at DESC, s.id DESC
 LIMIT :limit

-- The household library, a page at a time (:limit, :offset), in the library's order (the
-- library_page function, migration 011). Each row says what the story was about, for
-- whom, its length, its words (for the reading time) and the story it continues. Three
-- queries, one per way of matching, so each finds its ids with a plan of its own (the
-- words search uses the GIN indexes on stories.search and search_stems).

-- name: library_page
-- Every story on the shelf (not deleted, not hidden by screening).
SELECT * FROM library_page(ARRAY(SELECT id FROM shelf_stories), :limit, :offset)

-- name: search_library_words
-- The stories whose title, child's name or request hold every word of :query (a
-- to_tsquery text of `word:*` prefixes joined by `&`, built from letters and digits only),
-- as they were typed or stemmed in the story's language ("snails" finds "snail"; the
-- stems' own GIN index, migration 023).
SELECT * FROM library_page(
    ARRAY(SELECT id FROM shelf_stories
           WHERE search @@ to_tsquery('simple', :query)
              OR search_stems @@ library_stems_query(:query)),
    :limit, :offset)

-- name: search_library_letters
-- One or two letters (or only signs): :search matched as a plain substring,
-- case-insensitively and literally (no wildcards), in the title, name or request.
SELECT * FROM library_page(
    ARRAY(SELECT id FROM shelf_stories
           WHERE strpos(lower(title), lower(:search)) > 0
              OR strpos(lower(coalesce(search_name, '')), lower(:search)) > 0
              OR strpos(lower(coalesce(search_prompt, '')), lower(:search)) > 0),
    :limit, :offset)

-- name: delete_story
-- Takes a story off the shelf (soft: its job still points at it), and ends its share links
-- in the same statement: a restore brings the story back, not them. Zero rows: not there.
WITH deleted AS (
    UPDATE stories SET deleted_at = now()
     WHERE id = :story_id AND deleted_at IS NULL
    RETURNING id
), unshared AS (
    UPDATE story_shares SET revoked_at = now()
     WHERE story_id IN (SELECT id FROM deleted) AND revoked_at IS NULL
)
SELECT id FROM deleted

-- name: set_favourite
-- Marks or unmarks a story on the shelf as a favourite. Zero rows: not there.
UPDATE stories SET favourite = :favourite
 WHERE id = :story_id AND deleted_at IS NULL AND screening IS NULL
RETURNING id

-- name: story_title
-- The title of a story still on the shelf (not deleted, not hidden by screening).
SELECT title FROM shelf_stories WHERE id = :story_id

-- name: story_for_card
-- A finished job's story as its status card shows it: the title and where its screening
-- stands (NULL: shown; 'pending': being checked; 'flagged': cannot be shown). No row: the
-- story was deleted from the shelf. The body only when asked for (:with_body) and not
-- flagged: the card's last answer puts the story where its draft was (while it is being
-- checked too: the words the family watched being written stay until the check says no).
-- Its model too: the language its words are in (the demo writes English whatever asked);
-- and where its picture stands (story_picture_states' columns).
SELECT s.title, s.screening, s.model,
       CASE WHEN :with_body AND s.screening IS DISTINCT FROM 'flagged' THEN s.body END AS body,
       ps.picture_job_id, ps.picture_status, ps.picture_error, ps.picture_etag,
       ps.picture_small_etag
  FROM stories s JOIN story_picture_states ps ON ps.story_id = s.id
 WHERE s.id = :story_id AND s.deleted_at IS NULL

-- name: restore_story
-- Undo a delete: back on the shelf, in its old place (nothing else about it changed).
-- Zero rows: it was not deleted, or was deleted too long ago (:keep_s) to come back.
UPDATE stories SET deleted_at = NULL
 WHERE id = :story_id AND deleted_at IS NOT NULL
   AND deleted_at >= now() - make_interval(secs => :keep_s)
RETURNING id

-- name: recently_deleted
-- Stories deleted within :keep_s, most recently deleted first, with when each goes for good.
SELECT s.id, s.title, s.created_at, s.deleted_at, j.child_name, j.sibling_name, j.prompt,
       s.deleted_at + make_interval(secs => :keep_s) AS purge_at, j.language, s.model
  FROM stories s JOIN story_jobs j ON j.id = s.job_id
 WHERE s.deleted_at IS NOT NULL AND s.screening IS NULL
   AND s.deleted_at >= now() - make_interval(secs => :keep_s)
 ORDER BY s.deleted_at DESC, s.id DESC
 LIMIT :limit

-- name: count_recently_deleted
-- How many stories "recently deleted" holds.
SELECT count(*) FROM stories
 WHERE deleted_at IS NOT NULL AND screening IS NULL
   AND deleted_at >= now() - make_interval(secs => :keep_s)

-- name: story_sequels
-- The stories on the shelf that continue this one, in the order they were written.
SELECT s.id, s.title FROM shelf_stories s JOIN story_jobs j ON j.id = s.job_id
 WHERE j.sequel_of = :story_id
 ORDER BY s.created_at, s.id

-- name: export_stories
-- Everything a backup needs to restore the shelf elsewhere, oldest first (so a sequel
-- comes after the story it continues, which it names by uid), each with its job's row as
-- JSON (whose request columns app/requests.py reads), and its picture, if it has one.
SELECT s.uid, s.title, s.body, s.model, s.prompt_tokens, s.completion_tokens, s.created_at,
       s.favourite, to_jsonb(j) AS job, earlier.uid AS sequel_of_uid,
       earlier.title AS sequel_of_title, p.image AS picture
  FROM shelf_stories s JOIN story_jobs j ON j.id = s.job_id
  LEFT JOIN stories earlier ON earlier.id = j.sequel_of
  LEFT JOIN story_pictures p ON p.story_id = s.id
 ORDER BY s.created_at, s.id

-- name: deleted_story_title
-- The title of a story deleted within :keep_s, for the Undo that follows a delete.
SELECT title FROM stories
 WHERE id = :story_id AND deleted_at IS NOT NULL AND screening IS NULL
   AND deleted_at >= now() - make_interval(secs => :keep_s)
