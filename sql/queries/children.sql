-- The household's child profiles: the children store's alone (app/shelf/children.py).

-- name: list_children
-- Every profile, oldest first (the order they were added in: the home page's buttons).
SELECT id, name, age, length, language, likes, companions FROM children ORDER BY id

-- name: get_child
-- One profile by id.
SELECT id, name, age, length, language, likes, companions FROM children WHERE id = :child_id

-- name: lock_children
-- The profiles' lock, held until the transaction ends: an add and an import (each counts
-- the profiles against the cap, then writes) take it first, so two racing cannot together
-- pass the cap.
SELECT pg_advisory_xact_lock(:lock_key)

-- name: count_children
-- How many profiles the household has (under lock_children: none can be added meanwhile).
SELECT count(*) FROM children

-- name: add_child
-- A new profile, unless the household has :max already (zero rows then), run under
-- lock_children in the same transaction.
INSERT INTO children (name, age, length, language, likes, companions)
SELECT :name, :age, :length, :language, :likes, :companions
 WHERE (SELECT count(*) FROM children) < :max
RETURNING id, name, age, length, language, likes, companions

-- name: update_child
-- A profile's fields, all of them, replaced. Zero rows: there is no such profile. The jobs
-- asked for it copied what they needed, so no story changes.
UPDATE children
   SET name = :name, age = :age, length = :length, language = :language, likes = :likes,
       companions = :companions
 WHERE id = :child_id
RETURNING id, name, age, length, language, likes, companions

-- name: remove_child
-- A profile gone. Zero rows: it was not there.
DELETE FROM children WHERE id = :child_id RETURNING id

-- name: import_child
-- A profile restored from a backup, unless one with the same name and age is here already
-- (zero rows then); under lock_children, in the import's transaction, which the cap
-- (count_children once all are in) may roll back.
INSERT INTO children (name, age, length, language, likes, companions)
SELECT :name, :age, :length, :language, :likes, :companions
 WHERE NOT EXISTS (SELECT FROM children
                    WHERE name = :name AND age IS NOT DISTINCT FROM CAST(:age AS integer))
RETURNING id
