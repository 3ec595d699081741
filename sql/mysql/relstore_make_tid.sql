-- Sets p_tid to the TID of the UTC time p_now, made later than p_last (design.md §5): the
-- TimeStamp of p_now if that is larger, else p_last + 1, or the next minute at zero seconds
-- when p_last's low word is exhausted (ZODB's laterThan).
CREATE PROCEDURE relstore_make_tid(IN p_now DATETIME(6), IN p_last BIGINT, OUT p_tid BIGINT)
  COMMENT '{CHECKSUM}'
  SQL SECURITY INVOKER
BEGIN
  DECLARE v_minutes BIGINT;
  DECLARE v_micros BIGINT;
  DECLARE v_next DATETIME;
  -- The rounding guard: the minute comes from the DATETIME(6) fields, never from a value
  -- rounded to whole seconds (FROM_UNIXTIME of a fraction rounds, so from 59.5 s on the
  -- TID would be dated a minute ahead, a bug RelStorage fixed in 3.0a9).
  SET v_minutes = ((((YEAR(p_now) - 1900) * 12 + MONTH(p_now) - 1) * 31
                    + DAYOFMONTH(p_now) - 1) * 24 + HOUR(p_now)) * 60 + MINUTE(p_now);
  -- Seconds into the minute in units of 60 / 2**32 s, truncated, in exact integers.
  SET v_micros = SECOND(p_now) * 1000000 + MICROSECOND(p_now);
  SET p_tid = (v_minutes << 32) + ((v_micros << 32) DIV 60000000);
  IF p_tid <= p_last THEN
    IF (p_last & 4294967295) <> 4294967295 THEN
      SET p_tid = p_last + 1;
    ELSE
      SET v_minutes = p_last >> 32;
      SET v_next = MAKEDATE(v_minutes DIV 535680 + 1900, 1)
                   + INTERVAL (v_minutes DIV 44640 % 12) MONTH
                   + INTERVAL (v_minutes DIV 1440 % 31) DAY
                   + INTERVAL (v_minutes % 1440 + 1) MINUTE;
      SET p_tid = ((((YEAR(v_next) - 1900) * 12 + MONTH(v_next) - 1) * 31
                    + DAYOFMONTH(v_next) - 1) * 24 + HOUR(v_next)) * 60 + MINUTE(v_next);
      SET p_tid = p_tid << 32;
    END IF;
  END IF;
END
