-- relstore's own record of applied migrations (RelStorage ignores it).
CREATE TABLE IF NOT EXISTS relstore_schema (
  version INT NOT NULL PRIMARY KEY,
  name VARCHAR(200) NOT NULL,
  applied_at VARCHAR(32) NOT NULL
) ENGINE = InnoDB;
