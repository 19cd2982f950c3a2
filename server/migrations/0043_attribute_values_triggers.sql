-- The readings of a stored JSON value that attribute conditions compare (docs/TARGETING.md, "Attribute conditions"),
-- one grammar for every query: the text of a scalar; a number from a JSON number or a decimal string; an instant from
-- an ISO 8601 date or date-time string of a real day (a date is its UTC midnight, a time without offset is UTC).
CREATE FUNCTION herald_attribute_text(value jsonb) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE jsonb_typeof(value) WHEN 'string' THEN value #>> '{}' WHEN 'number' THEN value::text WHEN 'boolean' THEN value::text END
$$;
--> statement-breakpoint
CREATE FUNCTION herald_attribute_number(value jsonb) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN jsonb_typeof(value) = 'number' THEN value::numeric
    WHEN jsonb_typeof(value) = 'string' AND (value #>> '{}') ~ '^-?[0-9]{1,30}(\.[0-9]{1,30})?$' THEN (value #>> '{}')::numeric END
$$;
--> statement-breakpoint
-- The grammar first, then the calendar (a day past its month's end, or the year 0000, is no date): no cast that may
-- throw, so no subtransaction per value.
CREATE FUNCTION herald_attribute_at(value jsonb) RETURNS timestamptz LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
  t text;
  written text;
BEGIN
  IF jsonb_typeof(value) IS DISTINCT FROM 'string' THEN
    RETURN NULL;
  END IF;
  t := value #>> '{}';
  IF t ~ '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$' THEN
    written := t || 'T00:00:00Z';
  ELSIF t ~ '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,3})?)?(Z|[+-](0[0-9]|1[0-4]):[0-5][0-9])$' THEN
    written := t;
  ELSIF t ~ '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,3})?)?$' THEN
    written := t || 'Z';
  ELSE
    RETURN NULL;
  END IF;
  IF substr(written, 1, 4)::int < 1
    OR substr(written, 9, 2)::int > extract(day from make_date(substr(written, 1, 4)::int, substr(written, 6, 2)::int, 1) + interval '1 month - 1 day') THEN
    RETURN NULL;
  END IF;
  RETURN written::timestamptz;
END
$$;
--> statement-breakpoint
DROP FUNCTION herald_timestamptz_or_null(text);
--> statement-breakpoint
-- The rows of attribute_values for some people's attributes: one per scalar value, whose every reading is kept.
-- Arguments: subscriber id, project id, sandbox, attribute name, value.
CREATE FUNCTION herald_attribute_rows(text, text, boolean, text, jsonb)
RETURNS TABLE (subscriber_id text, project_id text, sandbox boolean, name text, text text, long boolean, number numeric, at timestamptz)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT $1, $2, $3, $4, CASE WHEN octet_length(r.t) <= 1000 THEN r.t END, octet_length(r.t) > 1000,
    herald_attribute_number($5), CASE WHEN r.t ~ '^[0-9]{4}-' THEN herald_attribute_at($5) END
  FROM (SELECT herald_attribute_text($5) AS t) r
  WHERE r.t IS NOT NULL
$$;
--> statement-breakpoint
CREATE FUNCTION herald_attribute_values_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO attribute_values
  SELECT v.* FROM inserted n, jsonb_each(n.attributes) a, herald_attribute_rows(n.id, n.project_id, n.sandbox, a.key, a.value) v;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- Only the names whose value changed are rewritten.
CREATE FUNCTION herald_attribute_values_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM attribute_values v WHERE v.subscriber_id = OLD.id
    AND v.name IN (SELECT o.key FROM jsonb_each(OLD.attributes) o WHERE NEW.attributes -> o.key IS DISTINCT FROM o.value);
  INSERT INTO attribute_values
  SELECT v.* FROM jsonb_each(NEW.attributes) a, herald_attribute_rows(NEW.id, NEW.project_id, NEW.sandbox, a.key, a.value) v
  WHERE OLD.attributes -> a.key IS DISTINCT FROM a.value;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION herald_attribute_values_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM attribute_values v USING deleted d WHERE v.subscriber_id = d.id;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- Per statement on insert and delete (a CSV import or a project's deletion is one set-based statement); per row on the
-- updates that change attributes, so every other update of a subscriber costs nothing.
CREATE TRIGGER subscribers_attribute_values_inserted AFTER INSERT ON subscribers REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION herald_attribute_values_inserted();
--> statement-breakpoint
CREATE TRIGGER subscribers_attribute_values_updated AFTER UPDATE OF attributes ON subscribers
  FOR EACH ROW WHEN (OLD.attributes IS DISTINCT FROM NEW.attributes) EXECUTE FUNCTION herald_attribute_values_updated();
--> statement-breakpoint
CREATE TRIGGER subscribers_attribute_values_deleted AFTER DELETE ON subscribers REFERENCING OLD TABLE AS deleted
  FOR EACH STATEMENT EXECUTE FUNCTION herald_attribute_values_deleted();
--> statement-breakpoint
-- A value is common within its name, not across names: the planner needs the pair's frequencies to choose a plan.
CREATE STATISTICS attribute_values_name_text (mcv) ON name, text FROM attribute_values;
--> statement-breakpoint
INSERT INTO attribute_values
SELECT v.* FROM subscribers s, jsonb_each(s.attributes) a, herald_attribute_rows(s.id, s.project_id, s.sandbox, a.key, a.value) v;
