-- A hero who comes back (issue 29): a child's companions, the recurring characters of
-- every story for them ("Pip, a little green dinosaur").
--
-- children.companions: up to 200 characters, as likes.
-- story_jobs.companions: copied from the profile when a story is asked for by child_id
-- (like likes), so a profile edited later changes no story; a sibling story brings both
-- children's, joined by "; ", so the bound is theirs together.
ALTER TABLE children ADD COLUMN IF NOT EXISTS companions text
    CONSTRAINT children_companions_short CHECK (length(companions) BETWEEN 1 AND 200);
ALTER TABLE story_jobs ADD COLUMN IF NOT EXISTS companions text
    CONSTRAINT story_jobs_companions_short CHECK (length(companions) BETWEEN 1 AND 402);
