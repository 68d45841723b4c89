"""The shelf: the library and its search, undo, favourites, sequels, backups, offline."""
