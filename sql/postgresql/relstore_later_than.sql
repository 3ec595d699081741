-- ZODB's TimeStamp.laterThan: p_new when it is later than p_last, else the smallest TID
-- after p_last. That is p_last + 1 unless the low word is exhausted; then it is the start
-- of the next real minute (calendar months, not the encoding's 31-day ones).
-- @begin
CREATE OR REPLACE FUNCTION relstore_later_than(p_new BIGINT, p_last BIGINT) RETURNS BIGINT
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  v_minutes BIGINT;
  v_next TIMESTAMP;
BEGIN
  IF p_new > p_last THEN
    RETURN p_new;
  END IF;
  IF (p_last & 4294967295) <> 4294967295 THEN
    RETURN p_last + 1;
  END IF;
  v_minutes := p_last >> 32;
  -- Days are added as an interval so that a day the month does not have rolls over
  -- instead of failing.
  v_next := make_timestamp((v_minutes / 535680 + 1900)::INT, (v_minutes / 44640 % 12 + 1)::INT, 1,
                           (v_minutes / 60 % 24)::INT, (v_minutes % 60)::INT, 0)
            + (v_minutes / 1440 % 31) * INTERVAL '1 day' + INTERVAL '1 minute';
  RETURN (((((extract(year FROM v_next)::BIGINT - 1900) * 12
             + extract(month FROM v_next)::BIGINT - 1) * 31
             + extract(day FROM v_next)::BIGINT - 1) * 24
             + extract(hour FROM v_next)::BIGINT) * 60
             + extract(minute FROM v_next)::BIGINT) << 32;
END;
$$;
-- @end
