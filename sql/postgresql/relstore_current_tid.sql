-- The TID of the server's clock now: one clock for every client of the database.
-- @begin
CREATE OR REPLACE FUNCTION relstore_current_tid() RETURNS BIGINT
LANGUAGE sql VOLATILE AS $$
  SELECT relstore_tid_for_epoch(extract(epoch FROM clock_timestamp())::DOUBLE PRECISION);
$$;
-- @end
