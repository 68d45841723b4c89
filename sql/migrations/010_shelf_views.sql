-- "On the shelf", written once: a story not deleted and not hidden by its screening. Every
-- query that shows stories reads this view; the planner inlines it, so the indexes on
-- stories apply as before. (A migration that adds a column to stories re-creates it.)
CREATE OR REPLACE VIEW shelf_stories AS
    SELECT * FROM stories WHERE deleted_at IS NULL AND screening IS NULL;

-- A library row, whichever way the library was asked for (all of it, or a search): what
-- the story was about, for whom, its length in words, and the earlier story a sequel
-- continues while that one is on the shelf. The three library queries pick and order ids;
-- this says what each row shows.
CREATE OR REPLACE VIEW library_rows AS
    SELECT s.id, s.title, s.created_at, s.job_id, s.favourite, s.series_id,
           j.child_name, j.prompt, j.age, j.length, j.sequel_of,
           earlier.title AS sequel_of_title,
           coalesce(array_length(regexp_split_to_array(btrim(s.body), '\s+'), 1), 0) AS words
      FROM stories s
      JOIN story_jobs j ON j.id = s.job_id
      LEFT JOIN shelf_stories earlier ON earlier.id = j.sequel_of;
