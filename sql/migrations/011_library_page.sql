-- The library's order and its rows, written once for all three ways of asking for it (the
-- whole shelf, a word search, a letters search): each picks the ids it finds, with its
-- own plan (the word search on the GIN index), and hands them here. Stories of one series
-- stay together, in the order they were written; series whose found stories include a
-- favourite come first, then the series with the newest story.
CREATE OR REPLACE FUNCTION library_page(p_ids bigint[], p_limit integer, p_offset integer)
RETURNS SETOF library_rows LANGUAGE sql STABLE AS $$
    WITH found AS (
        SELECT s.id, s.series_id, s.created_at,
               bool_or(s.favourite) OVER series AS series_favourite,
               max(s.created_at) OVER series AS series_newest
          FROM stories s
         WHERE s.id = ANY (p_ids)
        WINDOW series AS (PARTITION BY s.series_id)
    ), page AS (
        SELECT * FROM found
         ORDER BY series_favourite DESC, series_newest DESC, series_id DESC, created_at, id
         LIMIT p_limit OFFSET p_offset
    )
    SELECT r.* FROM page JOIN library_rows r ON r.id = page.id
     ORDER BY page.series_favourite DESC, page.series_newest DESC, page.series_id DESC,
              page.created_at, page.id
$$;
