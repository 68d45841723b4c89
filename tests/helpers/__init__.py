"""What the tests share: the database, the app in-process and as a process, the fake LLM,
the browser, lock races, shelving stories, ad-hoc SQL. No test module imports another."""
