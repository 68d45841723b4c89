-- The household's language for its pages, set on the Children page: NULL until chosen
-- (then each browser's own Accept-Language decides); UI_LANGUAGE, when set, comes first.
ALTER TABLE household ADD COLUMN IF NOT EXISTS language text
    CONSTRAINT household_language_known
    CHECK (language IN ('en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'pl', 'ar'));
