-- What a story's progress bar and a waiting job's estimate go by (app/queue/estimates.py).

-- name: median_durations
-- How long the last 20 completed stories of each length took to write (claim to finish),
-- in seconds, for stories by the model named (a prefix: providers add a version suffix).
SELECT length, percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds)::float8 AS seconds,
       count(*) AS samples
  FROM (SELECT j.length, extract(epoch FROM j.completed_at - j.started_at) AS seconds,
               row_number() OVER (PARTITION BY j.length ORDER BY j.completed_at DESC) AS recency
          FROM story_jobs j JOIN stories s ON s.id = j.story_id
         WHERE j.status = 'completed' AND starts_with(s.model, :model)
           AND j.completed_at > j.started_at) AS recent  -- not a restored backup's jobs
 WHERE recency <= 20
 GROUP BY length
