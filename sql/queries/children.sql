-- The household's child profiles: the children store's alone (app/shelf/children.py).

-- name: list_children
-- Every profile, oldest first (the order they were added in: the home page's buttons).
SELECT id, name, age, length, language, likes FROM children ORDER BY id

-- name: get_child
-- One profile by id.
SELECT id, name, age, length, language, likes FROM children WHERE id = :child_id

-- name: add_child
-- A new profile.
INSERT INTO children (name, age, length, language, likes)
VALUES (:name, :age, :length, :language, :likes)
RETURNING id, name, age, length, language, likes

-- name: import_child
-- A profile restored from a backup, unless one with the same name and age is here already
-- (zero rows then).
INSERT INTO children (name, age, length, language, likes)
SELECT :name, :age, :length, :language, :likes
 WHERE NOT EXISTS (SELECT FROM children
                    WHERE name = :name AND age IS NOT DISTINCT FROM CAST(:age AS integer))
RETURNING id
