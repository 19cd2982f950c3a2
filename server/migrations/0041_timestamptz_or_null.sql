-- Reads an ISO 8601 instant the attribute conditions have already shaped (always with Z or an offset), or NULL when
-- the calendar refuses it (2025-02-30): PostgreSQL 15 has no pg_input_is_valid.
CREATE FUNCTION herald_timestamptz_or_null(written text) RETURNS timestamptz LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
  RETURN written::timestamptz;
EXCEPTION WHEN others THEN
  RETURN NULL;
END
$$;
