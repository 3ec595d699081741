-- RelStorage 2.x named the column "empty"; 3.x renames it to "is_empty" when it opens
-- such a database, and so does this migration. A database created with the baseline
-- already has "is_empty": then nothing happens.

-- @hp
-- @begin
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name = 'transaction'
               AND column_name = 'empty') THEN
    ALTER TABLE "transaction" RENAME COLUMN empty TO is_empty;
  END IF;
END;
$$;
-- @end
