-- A failed job stores why as a code (app/failures.py's FAILURES), never a sentence: the
-- family reads it rendered from the code in its own language, the JSON API says it as
-- `error_code`. Every sentence a version of the app ever stored becomes its code; one not
-- known here becomes the generic code of its kind. 'cancelled' (the family's Stop) is
-- 'stopped', as the contract's error_code calls it; 'interrupted', 'expired' and
-- 'over_budget' were codes already. Only rows still holding a sentence are touched, so a
-- second run changes nothing.
UPDATE story_jobs
   SET error_text = CASE
        WHEN error_text = 'cancelled' THEN 'stopped'
        -- a story's
        WHEN error_text ~ '^the storyteller failed \(HTTP 40[13]\)$' THEN 'key_refused'
        WHEN error_text = 'the storyteller failed (HTTP 429)' THEN 'storyteller_busy'
        WHEN error_text LIKE 'the storyteller no longer offers the model %'
          OR error_text LIKE '%model_not_found%'
          THEN 'model_unavailable'
        WHEN error_text LIKE 'the storyteller failed (%' THEN 'storyteller_failed'
        WHEN error_text = 'the storyteller failed while writing' THEN 'storyteller_failed'
        WHEN error_text = 'the storyteller is busy (rate limited)' THEN 'storyteller_busy'
        WHEN error_text = 'the storyteller took too long' THEN 'storyteller_timeout'
        WHEN error_text = 'could not reach the storyteller' THEN 'storyteller_unreachable'
        WHEN error_text IN ('the storyteller sent an unreadable answer',
                            'the storyteller sent an answer too large to read')
          THEN 'storyteller_unreadable'
        WHEN error_text IN ('the storyteller sent nothing', 'the storyteller sent no story',
                            'the storyteller sent an empty story',
                            'the storyteller ran out of room before the story began')
          THEN 'storyteller_empty'
        WHEN error_text IN ('the storyteller declined to write this story',
                            'the story did not pass the safety check, so it was not shown')
          THEN 'declined'
        WHEN error_text IN ('the storyteller stopped mid-story',
                            'the storyteller stopped before the story began',
                            'the story was stopped at the storyteller')
          THEN 'cut_short'
        WHEN error_text = 'the storyteller no longer has this story' THEN 'interrupted'
        WHEN error_text = 'the story could not be saved' THEN 'not_saved'
        WHEN error_text = 'something went wrong while writing' THEN 'internal'
        -- a picture's
        WHEN error_text = 'the illustrator would not draw this story: it is kept as it is, '
                          'and you can try another picture' THEN 'picture_declined'
        WHEN error_text = 'the illustrator is busy (rate limited)' THEN 'illustrator_busy'
        WHEN error_text = 'the illustrator took too long' THEN 'illustrator_timeout'
        WHEN error_text = 'could not reach the illustrator' THEN 'illustrator_unreachable'
        WHEN error_text IN ('the illustrator sent an unreadable answer',
                            'the illustrator sent an answer too large to be a picture')
          THEN 'illustrator_unreadable'
        WHEN error_text = 'the illustrator sent no picture' THEN 'illustrator_empty'
        WHEN error_text = 'the illustrator sent a picture that cannot be shown'
          THEN 'picture_unshowable'
        WHEN error_text = 'the illustrator does not offer this model (set IMAGE_MODEL)'
          THEN 'picture_model_unavailable'
        WHEN error_text LIKE 'this storyteller has no /images/generations%'
          THEN 'pictures_unsupported'
        WHEN error_text = 'pictures are off here' THEN 'pictures_off'
        WHEN error_text = 'the story is gone' THEN 'story_gone'
        -- anything else: what its kind's provider said, in words no longer known
        WHEN kind = 'picture' THEN 'illustrator_failed'
        ELSE 'storyteller_failed' END
 WHERE error_text IS NOT NULL
   AND error_text NOT IN (
        'storyteller_failed', 'storyteller_busy', 'storyteller_timeout',
        'storyteller_unreachable', 'storyteller_unreadable', 'storyteller_empty',
        'key_refused', 'model_unavailable', 'declined', 'cut_short', 'stopped',
        'interrupted', 'expired', 'not_saved', 'internal',
        'illustrator_failed', 'illustrator_busy', 'illustrator_timeout',
        'illustrator_unreachable', 'illustrator_unreadable', 'illustrator_empty',
        'picture_unshowable', 'picture_declined', 'picture_model_unavailable',
        'pictures_unsupported', 'pictures_off', 'story_gone', 'over_budget');

-- Nothing else may be stored: a code added to app/failures.py and not here (or here and not
-- there) fails tests/test_failures.py, not a family's job.
ALTER TABLE story_jobs DROP CONSTRAINT IF EXISTS story_jobs_error_known;
ALTER TABLE story_jobs ADD CONSTRAINT story_jobs_error_known CHECK (error_text IN (
    'storyteller_failed', 'storyteller_busy', 'storyteller_timeout',
    'storyteller_unreachable', 'storyteller_unreadable', 'storyteller_empty',
    'key_refused', 'model_unavailable', 'declined', 'cut_short', 'stopped',
    'interrupted', 'expired', 'not_saved', 'internal',
    'illustrator_failed', 'illustrator_busy', 'illustrator_timeout',
    'illustrator_unreachable', 'illustrator_unreadable', 'illustrator_empty',
    'picture_unshowable', 'picture_declined', 'picture_model_unavailable',
    'pictures_unsupported', 'pictures_off', 'story_gone', 'over_budget'));
