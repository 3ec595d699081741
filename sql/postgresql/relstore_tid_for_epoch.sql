-- The TID (a ZODB TimeStamp, design.md §5) of a Unix time: the high 32 bits count minutes
-- since 1900 with every month 31 days long, the low 32 bits are the seconds within the
-- minute in units of 60/2^32 s, truncated. The calendar fields come from the start of the
-- minute so that rounding a fraction of a second can never move the minute forward.
-- @begin
CREATE OR REPLACE FUNCTION relstore_tid_for_epoch(p_epoch DOUBLE PRECISION) RETURNS BIGINT
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  v_minute_start DOUBLE PRECISION := floor(p_epoch / 60.0) * 60.0;
  v_seconds DOUBLE PRECISION;
  v_ts TIMESTAMP;
  v_minutes BIGINT;
BEGIN
  IF v_minute_start > p_epoch THEN
    -- p_epoch / 60 rounded up to a whole number just below a minute boundary.
    v_minute_start := v_minute_start - 60.0;
  END IF;
  v_seconds := p_epoch - v_minute_start;
  v_ts := to_timestamp(v_minute_start) AT TIME ZONE 'UTC';
  v_minutes := ((((extract(year FROM v_ts)::BIGINT - 1900) * 12
                  + extract(month FROM v_ts)::BIGINT - 1) * 31
                  + extract(day FROM v_ts)::BIGINT - 1) * 24
                  + extract(hour FROM v_ts)::BIGINT) * 60
                  + extract(minute FROM v_ts)::BIGINT;
  RETURN (v_minutes << 32) + trunc(v_seconds / (60.0::DOUBLE PRECISION / 4294967296.0))::BIGINT;
END;
$$;
-- @end
