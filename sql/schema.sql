-- The schema the migrations make (sql/migrations, then sql/functions), for reading:
-- written by `make schema` (tools/schema.py), checked by tests/test_migrations.py.
-- Change the schema with a new migration, never here.

--
-- PostgreSQL database dump
--

--
-- Name: story_jobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.story_jobs (
    id bigint NOT NULL,
    idempotency_key text NOT NULL,
    request_hash text NOT NULL,
    prompt text NOT NULL,
    child_name text,
    age integer,
    length text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    story_id bigint,
    error_text text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    heartbeat_at timestamp with time zone,
    claimed_by uuid,
    completed_at timestamp with time zone,
    text_so_far text DEFAULT ''::text NOT NULL,
    sequel_of bigint,
    previously text,
    response_id text,
    response_sequence bigint,
    cancel_requested_at timestamp with time zone,
    finish_of bigint,
    carried_text text,
    imported boolean DEFAULT false NOT NULL,
    language text DEFAULT 'en'::text NOT NULL,
    likes text,
    sibling_name text,
    sibling_age integer,
    companions text,
    kind text DEFAULT 'story'::text NOT NULL,
    picture_of bigint,
    claimed_kind text,
    set_aside_micros bigint DEFAULT 0 NOT NULL,
    call_sent_at timestamp with time zone,
    call_model text,
    call_price jsonb,
    dismissed_at timestamp with time zone,
    narration_of bigint,
    narration_part integer,
    narration_parts integer,
    narration_text text,
    CONSTRAINT claimed_as_its_kind CHECK (((kind = 'story'::text) OR (started_at IS NULL) OR (NOT (claimed_kind IS DISTINCT FROM kind)))),
    CONSTRAINT completed_has_story CHECK (((kind <> 'story'::text) OR ((status = 'completed'::text) = (story_id IS NOT NULL)))),
    CONSTRAINT failed_has_error CHECK (((status = 'failed'::text) = (error_text IS NOT NULL))),
    CONSTRAINT finished_has_time CHECK (((status = ANY (ARRAY['completed'::text, 'failed'::text])) = (completed_at IS NOT NULL))),
    CONSTRAINT handed_over_had_response CHECK (((claimed_by IS NOT NULL) OR (started_at IS NULL) OR (status <> 'running'::text) OR (response_id IS NOT NULL))),
    CONSTRAINT narration_reads_a_story CHECK ((((kind = 'narration'::text) = (narration_of IS NOT NULL)) AND ((kind <> 'narration'::text) OR (((narration_parts >= 1) AND (narration_parts <= 100)) AND (narration_part >= 0) AND (narration_part < narration_parts) AND ((length(narration_text) >= 1) AND (length(narration_text) <= 5000)))))),
    CONSTRAINT pending_not_claimed CHECK (((status <> 'pending'::text) OR (started_at IS NULL))),
    CONSTRAINT picture_draws_a_story CHECK ((((kind = 'picture'::text) = (picture_of IS NOT NULL)) AND ((kind = 'story'::text) OR (story_id IS NULL)))),
    CONSTRAINT running_was_claimed CHECK (((status <> 'running'::text) OR (started_at IS NOT NULL))),
    CONSTRAINT started_was_claimed CHECK ((((started_at IS NULL) = (heartbeat_at IS NULL)) AND ((started_at IS NOT NULL) OR (claimed_by IS NULL)))),
    CONSTRAINT story_jobs_age_check CHECK (((age >= 1) AND (age <= 12))),
    CONSTRAINT story_jobs_carried_text_short CHECK ((length(carried_text) <= 20000)),
    CONSTRAINT story_jobs_child_name_check CHECK (((length(child_name) >= 1) AND (length(child_name) <= 40))),
    CONSTRAINT story_jobs_companions_short CHECK (((length(companions) >= 1) AND (length(companions) <= 402))),
    CONSTRAINT story_jobs_dates_readable CHECK ((((created_at >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (created_at <= '9999-12-31 23:59:59.999999+00'::timestamp with time zone)) AND ((started_at IS NULL) OR ((started_at >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (started_at <= '9999-12-31 23:59:59.999999+00'::timestamp with time zone))) AND ((heartbeat_at IS NULL) OR ((heartbeat_at >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (heartbeat_at <= '9999-12-31 23:59:59.999999+00'::timestamp with time zone))) AND ((completed_at IS NULL) OR ((completed_at >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (completed_at <= '9999-12-31 23:59:59.999999+00'::timestamp with time zone))))),
    CONSTRAINT story_jobs_error_known CHECK ((error_text = ANY (ARRAY['storyteller_failed'::text, 'storyteller_busy'::text, 'storyteller_timeout'::text, 'storyteller_unreachable'::text, 'storyteller_unreadable'::text, 'storyteller_empty'::text, 'key_refused'::text, 'model_unavailable'::text, 'declined'::text, 'cut_short'::text, 'stopped'::text, 'interrupted'::text, 'expired'::text, 'not_saved'::text, 'internal'::text, 'illustrator_failed'::text, 'illustrator_busy'::text, 'illustrator_timeout'::text, 'illustrator_unreachable'::text, 'illustrator_unreadable'::text, 'illustrator_empty'::text, 'picture_unshowable'::text, 'picture_declined'::text, 'picture_model_unavailable'::text, 'pictures_unsupported'::text, 'pictures_off'::text, 'story_gone'::text, 'over_budget'::text, 'narrator_failed'::text, 'narrator_busy'::text, 'narrator_timeout'::text, 'narrator_unreachable'::text, 'narrator_unreadable'::text, 'narration_unplayable'::text, 'narration_model_unavailable'::text, 'narration_unsupported'::text, 'narrations_off'::text]))),
    CONSTRAINT story_jobs_idempotency_key_check CHECK (((length(idempotency_key) >= 1) AND (length(idempotency_key) <= 255))),
    CONSTRAINT story_jobs_kind_known CHECK ((kind = ANY (ARRAY['story'::text, 'picture'::text, 'narration'::text]))),
    CONSTRAINT story_jobs_language_known CHECK ((language = ANY (ARRAY['en'::text, 'es'::text, 'fr'::text, 'de'::text, 'it'::text, 'pt'::text, 'nl'::text, 'pl'::text, 'ar'::text, 'uk'::text, 'ja'::text]))),
    CONSTRAINT story_jobs_length_check CHECK ((length = ANY (ARRAY['short'::text, 'medium'::text, 'long'::text]))),
    CONSTRAINT story_jobs_likes_short CHECK (((length(likes) >= 1) AND (length(likes) <= 402))),
    CONSTRAINT story_jobs_previously_short CHECK ((length(previously) <= 1000)),
    CONSTRAINT story_jobs_prompt_check CHECK (((length(prompt) >= 1) AND (length(prompt) <= 500))),
    CONSTRAINT story_jobs_response_id_short CHECK (((length(response_id) >= 1) AND (length(response_id) <= 200))),
    CONSTRAINT story_jobs_set_aside_not_negative CHECK ((set_aside_micros >= 0)),
    CONSTRAINT story_jobs_sibling_age_has_name CHECK (((sibling_age IS NULL) OR (sibling_name IS NOT NULL))),
    CONSTRAINT story_jobs_sibling_age_range CHECK (((sibling_age >= 1) AND (sibling_age <= 12))),
    CONSTRAINT story_jobs_sibling_name_short CHECK (((length(sibling_name) >= 1) AND (length(sibling_name) <= 40))),
    CONSTRAINT story_jobs_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'running'::text, 'completed'::text, 'failed'::text])))
);

--
-- Name: insert_job(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.insert_job(p_columns jsonb) RETURNS public.story_jobs
    LANGUAGE plpgsql
    AS $$
DECLARE
    job story_jobs;
BEGIN
    INSERT INTO story_jobs
    SELECT * FROM jsonb_populate_record(NULL::story_jobs, jsonb_build_object(
        'id', nextval('story_jobs_id_seq'), 'status', 'pending', 'created_at', now(),
        'text_so_far', '', 'imported', false, 'language', 'en', 'kind', 'story',
        'set_aside_micros', 0) || p_columns)
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING * INTO job;
    RETURN job;
END
$$;

--
-- Name: insert_narration_jobs(bigint, text, text[], bigint[], text[], bigint, timestamp with time zone, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.insert_narration_jobs(p_story_id bigint, p_key text, p_texts text[], p_set_asides bigint[], p_columns text[], p_budget_micros bigint, p_month_start timestamp with time zone, p_lock_key bigint, OUT outcome text, OUT job_ids bigint[], OUT spent bigint, OUT set_aside bigint) RETURNS record
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_parts integer := cardinality(p_texts);
    v_missing integer[];
    v_needed bigint;
    v_job story_jobs;
    v_part integer;
BEGIN
    PERFORM pg_advisory_xact_lock(p_lock_key);
    IF NOT EXISTS (SELECT 1 FROM stories WHERE id = p_story_id AND deleted_at IS NULL) THEN
        outcome := 'gone';
        RETURN;
    END IF;
    SELECT array_agg(id ORDER BY narration_part) INTO job_ids FROM story_jobs
     WHERE narration_of = p_story_id AND kind = 'narration'
       AND idempotency_key LIKE p_key || ':%';
    IF job_ids IS NOT NULL THEN
        outcome := 'replayed';
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM story_jobs WHERE narration_of = p_story_id
                AND kind = 'narration' AND status IN ('pending', 'running')) THEN
        outcome := 'in_progress';
        RETURN;
    END IF;
    SELECT array_agg(n - 1 ORDER BY n) INTO v_missing
      FROM generate_subscripts(p_texts, 1) AS n
     WHERE NOT EXISTS (SELECT 1 FROM story_narration_parts p
                        WHERE p.story_id = p_story_id AND p.part = n - 1
                          AND p.parts = v_parts AND p.text_md5 = md5(p_texts[n]));
    IF v_missing IS NULL THEN
        outcome := 'complete';
        SELECT array_agg(job_id ORDER BY part) INTO job_ids FROM story_narration_parts
         WHERE story_id = p_story_id AND job_id IS NOT NULL;
        RETURN;
    END IF;
    SELECT coalesce(sum(p_set_asides[m + 1]), 0) INTO v_needed FROM unnest(v_missing) AS m;
    IF p_budget_micros IS NOT NULL THEN
        SELECT m.spent, m.set_aside INTO spent, set_aside FROM month_spend(p_month_start) AS m;
        IF spent + set_aside + v_needed > p_budget_micros THEN
            outcome := 'over_budget';
            RETURN;
        END IF;
    END IF;
    job_ids := ARRAY[]::bigint[];
    FOREACH v_part IN ARRAY v_missing LOOP
        -- In FROM, so insert_job runs once (`(f()).*` would call it once per column).
        SELECT made.* INTO v_job
          FROM stories s JOIN story_jobs j ON j.id = s.job_id,
               LATERAL insert_job(
                   (SELECT jsonb_object_agg(key, value) FROM jsonb_each(to_jsonb(j))
                     WHERE key = ANY (p_columns))
                   || jsonb_build_object('kind', 'narration', 'narration_of', s.id,
                                         'narration_part', v_part, 'narration_parts', v_parts,
                                         'narration_text', p_texts[v_part + 1],
                                         'idempotency_key', p_key || ':' || v_part,
                                         'request_hash', j.request_hash,
                                         'set_aside_micros',
                                         coalesce(p_set_asides[v_part + 1], 0))) AS made
         WHERE s.id = p_story_id;
        job_ids := job_ids || v_job.id;
    END LOOP;
    outcome := 'made';
    PERFORM pg_notify('story_jobs', job_ids[1]::text);
END
$$;

--
-- Name: insert_picture_job(bigint, text, text[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.insert_picture_job(p_story_id bigint, p_idempotency_key text, p_columns text[]) RETURNS public.story_jobs
    LANGUAGE sql
    AS $$
    SELECT (i.job).* FROM insert_picture_job(p_story_id, p_idempotency_key, p_columns,
                                            0, NULL, NULL, NULL) AS i
$$;

--
-- Name: insert_picture_job(bigint, text, text[], bigint, bigint, timestamp with time zone, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.insert_picture_job(p_story_id bigint, p_idempotency_key text, p_columns text[], p_set_aside bigint, p_budget_micros bigint, p_month_start timestamp with time zone, p_lock_key bigint, OUT job public.story_jobs, OUT over_budget boolean) RETURNS record
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_spent bigint;
    v_set_aside bigint;
BEGIN
    over_budget := false;
    IF p_budget_micros IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(p_lock_key);
        SELECT m.spent, m.set_aside INTO v_spent, v_set_aside FROM month_spend(p_month_start) AS m;
        over_budget := v_spent + v_set_aside + p_set_aside > p_budget_micros;
    END IF;
    -- In FROM, so insert_job runs once (`(f()).*` would call it once per column).
    SELECT made.* INTO job
      FROM stories s JOIN story_jobs j ON j.id = s.job_id,
           LATERAL insert_job(
               (SELECT jsonb_object_agg(key, value) FROM jsonb_each(to_jsonb(j))
                 WHERE key = ANY (p_columns))
               || jsonb_build_object('kind', 'picture', 'picture_of', s.id,
                                     'idempotency_key', p_idempotency_key,
                                     'request_hash', j.request_hash,
                                     'set_aside_micros', coalesce(p_set_aside, 0))
               || CASE WHEN over_budget THEN jsonb_build_object(
                      'status', 'failed', 'error_text', 'over_budget',
                      'completed_at', now(), 'set_aside_micros', 0)
                  ELSE '{}'::jsonb END) AS made
     WHERE s.id = p_story_id AND s.deleted_at IS NULL;
    IF job.id IS NOT NULL AND NOT over_budget THEN
        PERFORM pg_notify('story_jobs', job.id::text);
    END IF;
END
$$;

--
-- Name: intake_job(jsonb, text, text, timestamp with time zone, integer, integer, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.intake_job(p_request jsonb, p_idempotency_key text, p_request_hash text, p_since timestamp with time zone, p_queue_max integer, p_daily_limit integer, p_lock_key bigint, OUT job public.story_jobs, OUT replayed boolean, OUT pending bigint, OUT used_today bigint) RETURNS record
    LANGUAGE sql
    AS $$
    SELECT i.job, i.replayed, i.pending, i.used_today
      FROM intake_job(p_request, p_idempotency_key, p_request_hash, p_since, p_queue_max,
                      p_daily_limit, p_lock_key, NULL, NULL) AS i
$$;

--
-- Name: intake_job(jsonb, text, text, timestamp with time zone, integer, integer, bigint, bigint, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.intake_job(p_request jsonb, p_idempotency_key text, p_request_hash text, p_since timestamp with time zone, p_queue_max integer, p_daily_limit integer, p_lock_key bigint, p_budget_micros bigint, p_month_start timestamp with time zone, OUT job public.story_jobs, OUT replayed boolean, OUT pending bigint, OUT used_today bigint, OUT spent_micros bigint, OUT set_aside_micros bigint) RETURNS record
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_finish_of bigint := (p_request ->> 'finish_of')::bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(p_lock_key);
    SELECT * INTO job FROM story_jobs WHERE idempotency_key = p_idempotency_key;
    replayed := FOUND;
    IF replayed THEN
        RETURN;
    END IF;
    IF v_finish_of IS NOT NULL THEN
        SELECT * INTO job FROM story_jobs WHERE finish_of = v_finish_of;
        replayed := FOUND;
        IF replayed THEN
            RETURN;
        END IF;
    END IF;
    SELECT count(*) INTO pending
      FROM (SELECT FROM story_jobs WHERE status = 'pending' AND kind = 'story'
             LIMIT p_queue_max) AS bounded;
    SELECT count(*) INTO used_today
      FROM (SELECT FROM story_jobs
             WHERE created_at >= p_since AND NOT (status = 'failed' AND started_at IS NULL)
               AND NOT imported AND kind = 'story'
             LIMIT p_daily_limit) AS bounded;
    IF pending >= p_queue_max OR used_today >= p_daily_limit THEN
        job := NULL;
        RETURN;
    END IF;
    -- The month's budget: what was spent, what live jobs set aside, and this job's most.
    IF p_budget_micros IS NOT NULL THEN
        SELECT m.spent, m.set_aside INTO spent_micros, set_aside_micros
          FROM month_spend(p_month_start) AS m;
        IF spent_micros + set_aside_micros
           + coalesce((p_request ->> 'set_aside_micros')::bigint, 0) > p_budget_micros THEN
            job := NULL;
            RETURN;
        END IF;
    END IF;
    -- Only a writer that skips the lock (a backup's import) could take the key meanwhile:
    -- then no job (insert_job's NULL), and the caller asks for a retry, which replays.
    job := insert_job(p_request || jsonb_build_object('idempotency_key', p_idempotency_key,
                                                      'request_hash', p_request_hash));
    IF job.id IS NOT NULL THEN
        PERFORM pg_notify('story_jobs', job.id::text);
    END IF;
END
$$;

--
-- Name: intake_job(text, text, text, text, integer, text, bigint, text, bigint, text, text, text, timestamp with time zone, integer, integer, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.intake_job(p_idempotency_key text, p_request_hash text, p_prompt text, p_child_name text, p_age integer, p_length text, p_sequel_of bigint, p_previously text, p_finish_of bigint, p_carried_text text, p_language text, p_likes text, p_since timestamp with time zone, p_queue_max integer, p_daily_limit integer, p_lock_key bigint, OUT job public.story_jobs, OUT replayed boolean, OUT pending bigint, OUT used_today bigint) RETURNS record
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(p_lock_key);
    SELECT * INTO job FROM story_jobs WHERE idempotency_key = p_idempotency_key;
    replayed := FOUND;
    IF replayed THEN
        RETURN;
    END IF;
    SELECT count(*) INTO pending
      FROM (SELECT FROM story_jobs WHERE status = 'pending' LIMIT p_queue_max) AS bounded;
    SELECT count(*) INTO used_today
      FROM (SELECT FROM story_jobs
             WHERE created_at >= p_since AND NOT (status = 'failed' AND started_at IS NULL)
               AND NOT imported
             LIMIT p_daily_limit) AS bounded;
    IF pending >= p_queue_max OR used_today >= p_daily_limit THEN
        job := NULL;
        RETURN;
    END IF;
    INSERT INTO story_jobs (idempotency_key, request_hash, prompt, child_name, age, length,
                            sequel_of, previously, finish_of, carried_text, language, likes)
    VALUES (p_idempotency_key, p_request_hash, p_prompt, p_child_name, p_age, p_length,
            p_sequel_of, p_previously, p_finish_of, p_carried_text, p_language, p_likes)
    -- Only a writer that skips the lock (a backup's import) could take the key meanwhile:
    -- then no job, and the caller asks for a retry, which replays.
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING * INTO job;
    IF job.id IS NOT NULL THEN
        PERFORM pg_notify('story_jobs', job.id::text);
    END IF;
END
$$;

--
-- Name: intake_job(text, text, text, text, integer, text, bigint, text, bigint, text, text, text, text, integer, timestamp with time zone, integer, integer, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.intake_job(p_idempotency_key text, p_request_hash text, p_prompt text, p_child_name text, p_age integer, p_length text, p_sequel_of bigint, p_previously text, p_finish_of bigint, p_carried_text text, p_language text, p_likes text, p_sibling_name text, p_sibling_age integer, p_since timestamp with time zone, p_queue_max integer, p_daily_limit integer, p_lock_key bigint, OUT job public.story_jobs, OUT replayed boolean, OUT pending bigint, OUT used_today bigint) RETURNS record
    LANGUAGE sql
    AS $$
    SELECT i.job, i.replayed, i.pending, i.used_today
      FROM intake_job(jsonb_build_object(
               'prompt', p_prompt, 'child_name', p_child_name, 'age', p_age,
               'length', p_length, 'sequel_of', p_sequel_of, 'previously', p_previously,
               'finish_of', p_finish_of, 'carried_text', p_carried_text,
               'language', p_language, 'likes', p_likes, 'sibling_name', p_sibling_name,
               'sibling_age', p_sibling_age),
           p_idempotency_key, p_request_hash, p_since, p_queue_max, p_daily_limit,
           p_lock_key) AS i
$$;

--
-- Name: stories; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.stories (
    id bigint NOT NULL,
    job_id bigint NOT NULL,
    title text NOT NULL,
    body text NOT NULL,
    model text NOT NULL,
    prompt_tokens integer,
    completion_tokens integer,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    favourite boolean DEFAULT false NOT NULL,
    deleted_at timestamp with time zone,
    screening text,
    search_prompt text,
    search_name text,
    series_id bigint NOT NULL,
    search tsvector GENERATED ALWAYS AS (((setweight(to_tsvector('simple'::regconfig, COALESCE(title, ''::text)), 'A'::"char") || setweight(to_tsvector('simple'::regconfig, COALESCE(search_name, ''::text)), 'A'::"char")) || setweight(to_tsvector('simple'::regconfig, COALESCE(search_prompt, ''::text)), 'B'::"char"))) STORED,
    uid uuid DEFAULT gen_random_uuid() NOT NULL,
    search_config regconfig DEFAULT 'simple'::regconfig NOT NULL,
    search_stems tsvector GENERATED ALWAYS AS (((setweight(to_tsvector(search_config, COALESCE(title, ''::text)), 'A'::"char") || setweight(to_tsvector(search_config, COALESCE(search_name, ''::text)), 'A'::"char")) || setweight(to_tsvector(search_config, COALESCE(search_prompt, ''::text)), 'B'::"char"))) STORED,
    usage_estimated boolean DEFAULT false NOT NULL,
    CONSTRAINT stories_created_at_readable CHECK (((created_at >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (created_at <= '9999-12-31 23:59:59.999999+00'::timestamp with time zone))),
    CONSTRAINT stories_deleted_at_readable CHECK (((deleted_at >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (deleted_at <= '9999-12-31 23:59:59.999999+00'::timestamp with time zone))),
    CONSTRAINT stories_screening_known CHECK ((screening = ANY (ARRAY['pending'::text, 'flagged'::text])))
);

--
-- Name: shelf_stories; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.shelf_stories AS
 SELECT id,
    job_id,
    title,
    body,
    model,
    prompt_tokens,
    completion_tokens,
    created_at,
    favourite,
    deleted_at,
    screening,
    search_prompt,
    search_name,
    series_id,
    search,
    uid,
    search_config,
    search_stems
   FROM public.stories
  WHERE ((deleted_at IS NULL) AND (screening IS NULL));

--
-- Name: library_rows; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.library_rows AS
 SELECT s.id,
    s.title,
    s.created_at,
    s.job_id,
    s.favourite,
    s.series_id,
    j.child_name,
    j.prompt,
    j.age,
    j.length,
    j.sequel_of,
    earlier.title AS sequel_of_title,
    COALESCE(array_length(regexp_split_to_array(btrim(s.body), '\s+'::text), 1), 0) AS words,
    j.sibling_name,
    j.language,
    s.model,
    length(regexp_replace(s.body, '\s'::text, ''::text, 'g'::text)) AS characters
   FROM ((public.stories s
     JOIN public.story_jobs j ON ((j.id = s.job_id)))
     LEFT JOIN public.shelf_stories earlier ON ((earlier.id = j.sequel_of)));

--
-- Name: library_page(bigint[], integer, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.library_page(p_ids bigint[], p_limit integer, p_offset integer) RETURNS SETOF public.library_rows
    LANGUAGE sql STABLE
    AS $$
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

--
-- Name: library_stems_query(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.library_stems_query(p_query text) RETURNS tsquery
    LANGUAGE sql STABLE
    SET client_min_messages TO 'warning'
    AS $$
    SELECT string_agg(DISTINCT '(' || stemmed::text || ')', ' | ')::tsquery
      FROM (SELECT to_tsquery(story_search_config(language), p_query) AS stemmed
              FROM unnest(ARRAY['en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'pl', 'ar', 'uk',
                                'ja']) AS language
           ) AS each_language
     WHERE numnode(stemmed) > 0
$$;

--
-- Name: month_spend(timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.month_spend(p_month_start timestamp with time zone, OUT spent bigint, OUT set_aside bigint) RETURNS record
    LANGUAGE sql STABLE
    AS $$
    SELECT (SELECT coalesce(sum(cost_micros), 0)::bigint FROM spend
             WHERE created_at >= p_month_start),
           (SELECT coalesce(sum(set_aside_micros), 0)::bigint FROM story_jobs
             WHERE status IN ('pending', 'running') AND set_aside_micros > 0)
$$;

--
-- Name: stories_copy_request(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.stories_copy_request() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    -- The job's request, and the series of the story it continues (else a series of its own).
    SELECT j.prompt, nullif(concat_ws(' ', j.child_name, j.sibling_name), ''),
           coalesce(earlier.series_id, NEW.id), story_search_config(j.language)
      INTO NEW.search_prompt, NEW.search_name, NEW.series_id, NEW.search_config
      FROM story_jobs j
      LEFT JOIN stories earlier ON earlier.id = j.sequel_of
     WHERE j.id = NEW.job_id;
    NEW.series_id := coalesce(NEW.series_id, NEW.id);
    NEW.search_config := coalesce(NEW.search_config, 'simple'::regconfig);
    RETURN NEW;
END
$$;

--
-- Name: story_search_config(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.story_search_config(p_language text) RETURNS regconfig
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce(
        (SELECT c.oid::regconfig FROM pg_ts_config c
          WHERE c.cfgnamespace = 'pg_catalog'::regnamespace
            AND c.cfgname = CASE p_language
                WHEN 'en' THEN 'english' WHEN 'es' THEN 'spanish' WHEN 'fr' THEN 'french'
                WHEN 'de' THEN 'german' WHEN 'it' THEN 'italian' WHEN 'pt' THEN 'portuguese'
                WHEN 'nl' THEN 'dutch' WHEN 'pl' THEN 'polish' WHEN 'ar' THEN 'arabic' END),
        'simple'::regconfig)
$$;

--
-- Name: children; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.children (
    id bigint NOT NULL,
    name text NOT NULL,
    age integer,
    length text,
    language text,
    likes text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    companions text,
    CONSTRAINT children_age_check CHECK (((age >= 1) AND (age <= 12))),
    CONSTRAINT children_companions_short CHECK (((length(companions) >= 1) AND (length(companions) <= 200))),
    CONSTRAINT children_language_check CHECK ((language = ANY (ARRAY['en'::text, 'es'::text, 'fr'::text, 'de'::text, 'it'::text, 'pt'::text, 'nl'::text, 'pl'::text, 'ar'::text, 'uk'::text, 'ja'::text]))),
    CONSTRAINT children_length_check CHECK ((length = ANY (ARRAY['short'::text, 'medium'::text, 'long'::text]))),
    CONSTRAINT children_likes_check CHECK (((length(likes) >= 1) AND (length(likes) <= 200))),
    CONSTRAINT children_name_check CHECK (((length(name) >= 1) AND (length(name) <= 40)))
);

--
-- Name: children_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.children ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.children_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: household; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.household (
    one boolean DEFAULT true NOT NULL,
    bedtime time(0) without time zone DEFAULT '18:30:00'::time without time zone NOT NULL,
    language text,
    CONSTRAINT household_bedtime_in_the_evening CHECK (((bedtime >= '16:00:00'::time without time zone) AND (bedtime <= '23:59:00'::time without time zone))),
    CONSTRAINT household_language_known CHECK ((language = ANY (ARRAY['en'::text, 'es'::text, 'fr'::text, 'de'::text, 'it'::text, 'pt'::text, 'nl'::text, 'pl'::text, 'ar'::text, 'uk'::text, 'ja'::text]))),
    CONSTRAINT household_one_check CHECK (one)
);

--
-- Name: login_failures; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.login_failures (
    scope text NOT NULL,
    client text NOT NULL,
    failures integer NOT NULL,
    window_ends_at timestamp with time zone NOT NULL,
    CONSTRAINT login_failures_client_check CHECK ((length(client) <= 100)),
    CONSTRAINT login_failures_failures_check CHECK ((failures >= 0)),
    CONSTRAINT login_failures_scope_check CHECK ((scope = ANY (ARRAY['address'::text, 'app'::text, 'device'::text, 'share'::text])))
);

--
-- Name: schedules; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schedules (
    name text NOT NULL,
    every_s double precision NOT NULL,
    next_at timestamp with time zone NOT NULL,
    claimed_at timestamp with time zone,
    last_ok_at timestamp with time zone,
    last_file text,
    last_error text,
    last_error_at timestamp with time zone,
    CONSTRAINT schedules_every_s_check CHECK ((every_s > (0)::double precision)),
    CONSTRAINT schedules_name_check CHECK ((length(name) <= 100))
);

--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    version text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sessions (
    sid text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    ended_at timestamp with time zone,
    last_seen_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT sessions_sid_check CHECK (((length(sid) >= 16) AND (length(sid) <= 64)))
);

--
-- Name: spend; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.spend (
    id bigint NOT NULL,
    job_id bigint,
    kind text NOT NULL,
    child_name text,
    model text NOT NULL,
    input_tokens bigint DEFAULT 0 NOT NULL,
    cached_tokens bigint DEFAULT 0 NOT NULL,
    output_tokens bigint DEFAULT 0 NOT NULL,
    images integer DEFAULT 0 NOT NULL,
    price jsonb,
    cost_micros bigint NOT NULL,
    estimated boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT spend_cached_tokens_check CHECK ((cached_tokens >= 0)),
    CONSTRAINT spend_cost_micros_check CHECK ((cost_micros >= 0)),
    CONSTRAINT spend_images_check CHECK ((images >= 0)),
    CONSTRAINT spend_input_tokens_check CHECK ((input_tokens >= 0)),
    CONSTRAINT spend_kind_known CHECK ((kind = ANY (ARRAY['story'::text, 'picture'::text, 'narration'::text, 'moderation'::text]))),
    CONSTRAINT spend_output_tokens_check CHECK ((output_tokens >= 0))
);

--
-- Name: spend_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.spend_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: spend_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.spend_id_seq OWNED BY public.spend.id;

--
-- Name: stories_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.stories_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: stories_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.stories_id_seq OWNED BY public.stories.id;

--
-- Name: story_jobs_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.story_jobs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: story_jobs_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.story_jobs_id_seq OWNED BY public.story_jobs.id;

--
-- Name: story_narration_parts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.story_narration_parts (
    story_id bigint NOT NULL,
    part integer NOT NULL,
    parts integer NOT NULL,
    job_id bigint,
    text_md5 text NOT NULL,
    content_type text NOT NULL,
    audio bytea NOT NULL,
    seconds numeric(9,2) NOT NULL,
    model text NOT NULL,
    voice text NOT NULL,
    etag text GENERATED ALWAYS AS (md5(audio)) STORED,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT story_narration_parts_audio_bounded CHECK (((octet_length(audio) >= 1) AND (octet_length(audio) <= 8388608))),
    CONSTRAINT story_narration_parts_counted CHECK ((((parts >= 1) AND (parts <= 100)) AND (part >= 0) AND (part < parts))),
    CONSTRAINT story_narration_parts_seconds_bounded CHECK (((seconds > (0)::numeric) AND (seconds < (3600)::numeric))),
    CONSTRAINT story_narration_parts_type_known CHECK ((content_type = ANY (ARRAY['audio/mpeg'::text, 'audio/ogg'::text, 'audio/wav'::text, 'audio/aac'::text])))
);

--
-- Name: story_pictures; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.story_pictures (
    story_id bigint NOT NULL,
    job_id bigint,
    content_type text NOT NULL,
    image bytea NOT NULL,
    small_type text NOT NULL,
    small bytea NOT NULL,
    model text NOT NULL,
    etag text GENERATED ALWAYS AS (md5(image)) STORED,
    small_etag text GENERATED ALWAYS AS (md5(small)) STORED,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT story_pictures_image_bounded CHECK (((octet_length(image) >= 1) AND (octet_length(image) <= 4194304))),
    CONSTRAINT story_pictures_small_bounded CHECK (((octet_length(small) >= 1) AND (octet_length(small) <= 65536))),
    CONSTRAINT story_pictures_small_type_known CHECK ((small_type = ANY (ARRAY['image/png'::text, 'image/webp'::text, 'image/jpeg'::text, 'image/svg+xml'::text]))),
    CONSTRAINT story_pictures_type_known CHECK ((content_type = ANY (ARRAY['image/png'::text, 'image/webp'::text, 'image/jpeg'::text, 'image/svg+xml'::text])))
);

--
-- Name: story_picture_states; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.story_picture_states AS
 SELECT s.id AS story_id,
    j.id AS picture_job_id,
    j.status AS picture_status,
    j.error_text AS picture_error,
    p.etag AS picture_etag,
    p.small_etag AS picture_small_etag
   FROM ((public.stories s
     LEFT JOIN LATERAL ( SELECT story_jobs.id,
            story_jobs.status,
            story_jobs.error_text
           FROM public.story_jobs
          WHERE (story_jobs.picture_of = s.id)
          ORDER BY story_jobs.id DESC
         LIMIT 1) j ON (true))
     LEFT JOIN public.story_pictures p ON ((p.story_id = s.id)));

--
-- Name: story_shares; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.story_shares (
    id bigint NOT NULL,
    story_id bigint NOT NULL,
    token_hash bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    revoked_at timestamp with time zone,
    CONSTRAINT story_shares_hash_is_sha256 CHECK ((octet_length(token_hash) = 32))
);

--
-- Name: story_shares_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.story_shares_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

--
-- Name: story_shares_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.story_shares_id_seq OWNED BY public.story_shares.id;

--
-- Name: workers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.workers (
    boot_id uuid NOT NULL,
    host text NOT NULL,
    pid integer NOT NULL,
    concurrency integer NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    heartbeat_at timestamp with time zone DEFAULT now() NOT NULL,
    stopped_at timestamp with time zone,
    gone_at timestamp with time zone,
    CONSTRAINT workers_concurrency_check CHECK ((concurrency >= 0))
);

--
-- Name: spend id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.spend ALTER COLUMN id SET DEFAULT nextval('public.spend_id_seq'::regclass);

--
-- Name: stories id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.stories ALTER COLUMN id SET DEFAULT nextval('public.stories_id_seq'::regclass);

--
-- Name: story_jobs id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.story_jobs ALTER COLUMN id SET DEFAULT nextval('public.story_jobs_id_seq'::regclass);

--
-- Name: story_shares id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.story_shares ALTER COLUMN id SET DEFAULT nextval('public.story_shares_id_seq'::regclass);

--
-- Name: children children_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.children
    ADD CONSTRAINT children_pkey PRIMARY KEY (id);

--
-- Name: household household_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.household
    ADD CONSTRAINT household_pkey PRIMARY KEY (one);

--
-- Name: login_failures login_failures_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.login_failures
    ADD CONSTRAINT login_failures_pkey PRIMARY KEY (scope, client);

--
-- Name: schedules schedules_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schedules
    ADD CONSTRAINT schedules_pkey PRIMARY KEY (name);

--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);

--
-- Name: sessions sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (sid);

--
-- Name: spend spend_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.spend
    ADD CONSTRAINT spend_pkey PRIMARY KEY (id);

--
-- Name: stories stories_job_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.stories
    ADD CONSTRAINT stories_job_id_key UNIQUE (job_id);

--
-- Name: stories stories_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.stories
    ADD CONSTRAINT stories_pkey PRIMARY KEY (id);

--
-- Name: story_jobs story_jobs_idempotency_key_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.story_jobs
    ADD CONSTRAINT story_jobs_idempotency_key_key UNIQUE (idempotency_key);

--
-- Name: story_jobs story_jobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.story_jobs
    ADD CONSTRAINT story_jobs_pkey PRIMARY KEY (id);

--
-- Name: story_narration_parts story_narration_parts_job_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.story_narration_parts
    ADD CONSTRAINT story_narration_parts_job_id_key UNIQUE (job_id);

--
-- Name: story_narration_parts story_narration_parts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.story_narration_parts
    ADD CONSTRAINT story_narration_parts_pkey PRIMARY KEY (story_id, part);

--
-- Name: story_pictures story_pictures_job_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.story_pictures
    ADD CONSTRAINT story_pictures_job_id_key UNIQUE (job_id);

--
-- Name: story_pictures story_pictures_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.story_pictures
    ADD CONSTRAINT story_pictures_pkey PRIMARY KEY (story_id);

--
-- Name: story_shares story_shares_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.story_shares
    ADD CONSTRAINT story_shares_pkey PRIMARY KEY (id);

--
-- Name: story_shares story_shares_token_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.story_shares
    ADD CONSTRAINT story_shares_token_hash_key UNIQUE (token_hash);

--
-- Name: workers workers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workers
    ADD CONSTRAINT workers_pkey PRIMARY KEY (boot_id);

--
-- Name: spend_by_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX spend_by_time ON public.spend USING btree (created_at);

--
-- Name: spend_one_call_per_job; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX spend_one_call_per_job ON public.spend USING btree (job_id, kind) WHERE (job_id IS NOT NULL);

--
-- Name: stories_awaiting_screening; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX stories_awaiting_screening ON public.stories USING btree (created_at, id) WHERE (screening = 'pending'::text);

--
-- Name: stories_created_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX stories_created_at ON public.stories USING btree (created_at DESC);

--
-- Name: stories_deleted; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX stories_deleted ON public.stories USING btree (deleted_at) WHERE (deleted_at IS NOT NULL);

--
-- Name: stories_search; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX stories_search ON public.stories USING gin (search);

--
-- Name: stories_search_stems; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX stories_search_stems ON public.stories USING gin (search_stems);

--
-- Name: stories_series; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX stories_series ON public.stories USING btree (series_id);

--
-- Name: stories_shelf; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX stories_shelf ON public.stories USING btree (favourite DESC, created_at DESC) WHERE (deleted_at IS NULL);

--
-- Name: stories_uid; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX stories_uid ON public.stories USING btree (uid);

--
-- Name: story_jobs_adoptable; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX story_jobs_adoptable ON public.story_jobs USING btree (heartbeat_at) WHERE ((status = 'running'::text) AND (response_id IS NOT NULL));

--
-- Name: story_jobs_created_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX story_jobs_created_at ON public.story_jobs USING btree (created_at);

--
-- Name: story_jobs_cut_short; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX story_jobs_cut_short ON public.story_jobs USING btree (id) WHERE ((status = 'failed'::text) AND (kind = 'story'::text) AND (dismissed_at IS NULL));

--
-- Name: story_jobs_finish_of_once; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX story_jobs_finish_of_once ON public.story_jobs USING btree (finish_of) WHERE (finish_of IS NOT NULL);

--
-- Name: story_jobs_narrations; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX story_jobs_narrations ON public.story_jobs USING btree (narration_of, id) WHERE (narration_of IS NOT NULL);

--
-- Name: story_jobs_one_narration_part_at_a_time; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX story_jobs_one_narration_part_at_a_time ON public.story_jobs USING btree (narration_of, narration_part) WHERE ((kind = 'narration'::text) AND (status = ANY (ARRAY['pending'::text, 'running'::text])));

--
-- Name: story_jobs_one_picture_at_a_time; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX story_jobs_one_picture_at_a_time ON public.story_jobs USING btree (picture_of) WHERE ((kind = 'picture'::text) AND (status = ANY (ARRAY['pending'::text, 'running'::text])));

--
-- Name: story_jobs_pending; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX story_jobs_pending ON public.story_jobs USING btree (created_at, id) WHERE (status = 'pending'::text);

--
-- Name: story_jobs_pictures; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX story_jobs_pictures ON public.story_jobs USING btree (picture_of, id) WHERE (picture_of IS NOT NULL);

--
-- Name: story_jobs_unfinished; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX story_jobs_unfinished ON public.story_jobs USING btree (status, created_at) WHERE (status = ANY (ARRAY['pending'::text, 'running'::text]));

--
-- Name: story_shares_of_story; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX story_shares_of_story ON public.story_shares USING btree (story_id, id);

--
-- Name: stories stories_copy_request; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER stories_copy_request BEFORE INSERT ON public.stories FOR EACH ROW EXECUTE FUNCTION public.stories_copy_request();

--
-- Name: spend spend_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.spend
    ADD CONSTRAINT spend_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.story_jobs(id) ON DELETE SET NULL;

--
-- Name: stories stories_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.stories
    ADD CONSTRAINT stories_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.story_jobs(id);

--
-- Name: story_jobs story_jobs_finish_of_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.story_jobs
    ADD CONSTRAINT story_jobs_finish_of_fkey FOREIGN KEY (finish_of) REFERENCES public.story_jobs(id) ON DELETE SET NULL;

--
-- Name: story_jobs story_jobs_narration_of_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.story_jobs
    ADD CONSTRAINT story_jobs_narration_of_fkey FOREIGN KEY (narration_of) REFERENCES public.stories(id) ON DELETE CASCADE;

--
-- Name: story_jobs story_jobs_picture_of_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.story_jobs
    ADD CONSTRAINT story_jobs_picture_of_fkey FOREIGN KEY (picture_of) REFERENCES public.stories(id) ON DELETE CASCADE;

--
-- Name: story_jobs story_jobs_sequel_of_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.story_jobs
    ADD CONSTRAINT story_jobs_sequel_of_fkey FOREIGN KEY (sequel_of) REFERENCES public.stories(id) ON DELETE SET NULL;

--
-- Name: story_jobs story_jobs_story_fk; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.story_jobs
    ADD CONSTRAINT story_jobs_story_fk FOREIGN KEY (story_id) REFERENCES public.stories(id);

--
-- Name: story_narration_parts story_narration_parts_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.story_narration_parts
    ADD CONSTRAINT story_narration_parts_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.story_jobs(id) ON DELETE SET NULL;

--
-- Name: story_narration_parts story_narration_parts_story_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.story_narration_parts
    ADD CONSTRAINT story_narration_parts_story_id_fkey FOREIGN KEY (story_id) REFERENCES public.stories(id) ON DELETE CASCADE;

--
-- Name: story_pictures story_pictures_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.story_pictures
    ADD CONSTRAINT story_pictures_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.story_jobs(id) ON DELETE SET NULL;

--
-- Name: story_pictures story_pictures_story_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.story_pictures
    ADD CONSTRAINT story_pictures_story_id_fkey FOREIGN KEY (story_id) REFERENCES public.stories(id) ON DELETE CASCADE;

--
-- Name: story_shares story_shares_story_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.story_shares
    ADD CONSTRAINT story_shares_story_id_fkey FOREIGN KEY (story_id) REFERENCES public.stories(id) ON DELETE CASCADE;

--
-- PostgreSQL database dump complete
--
