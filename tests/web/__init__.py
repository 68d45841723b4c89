"""HTTP: the JSON API, the pages, static files, compression, bad input of every kind."""
