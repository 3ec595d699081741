-- The records of the transaction being committed, as the vote and finish calls read them:
-- the arrays the client sent with the call, or, when it sent NULL instead (a vote too large
-- for parameters, uploaded by COPY), the rows of the session's temp_store. Columns the
-- caller did not send come back NULL. One SELECT in SQL, so the planner inlines it into
-- the statements that use it: no function call, no materialised rows. The functions that
-- use it force generic plans: a custom plan, which PostgreSQL would otherwise keep making
-- because knowing whether p_zoids is NULL makes it look cheaper, parses this body again
-- on every call (measured: 1-object commits went from 0.6 to 1.2 ms). Its body names
-- temp_store, which exists only in store sessions, so it is not checked when created.
SET LOCAL check_function_bodies = off;
-- @begin
CREATE OR REPLACE FUNCTION relstore_records(
  p_zoids BIGINT[], p_prev_tids BIGINT[], p_md5s TEXT[], p_states BYTEA[])
RETURNS TABLE (zoid BIGINT, prev_tid BIGINT, md5 TEXT, state BYTEA)
LANGUAGE sql STABLE AS $$
  SELECT t.zoid, t.prev_tid, t.md5::TEXT, t.state FROM temp_store t WHERE p_zoids IS NULL
  UNION ALL
  SELECT u.zoid, u.prev_tid, u.md5, u.state
  FROM unnest(p_zoids, p_prev_tids, p_md5s, p_states) AS u (zoid, prev_tid, md5, state);
$$;
-- @end
SET LOCAL check_function_bodies = on;
