-- relstore's own record of applied migrations (RelStorage ignores it).
CREATE TABLE IF NOT EXISTS relstore_schema (
  version INTEGER PRIMARY KEY NOT NULL,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL
);
