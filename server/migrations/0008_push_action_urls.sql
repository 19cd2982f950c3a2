-- A push button's `action` is the URL it opens (spec 2.2). The Herald extra `url` that carried it until now becomes the
-- `action`; a button with no http(s) URL at all opened nothing a service worker could know, and is removed.
UPDATE "campaigns" SET "content" = ("content" - 'actions') || coalesce((
  SELECT jsonb_build_object('actions', jsonb_agg(jsonb_build_object('action', coalesce(a ->> 'url', a ->> 'action'), 'title', a -> 'title') ORDER BY n))
  FROM jsonb_array_elements("content" -> 'actions') WITH ORDINALITY AS e(a, n)
  WHERE coalesce(a ->> 'url', a ->> 'action') ~* '^https?://'
  HAVING count(*) > 0
), '{}'::jsonb)
WHERE jsonb_typeof("content" -> 'actions') = 'array';--> statement-breakpoint
UPDATE "messages" SET "content" = ("content" - 'actions') || coalesce((
  SELECT jsonb_build_object('actions', jsonb_agg(jsonb_build_object('action', coalesce(a ->> 'url', a ->> 'action'), 'title', a -> 'title') ORDER BY n))
  FROM jsonb_array_elements("content" -> 'actions') WITH ORDINALITY AS e(a, n)
  WHERE coalesce(a ->> 'url', a ->> 'action') ~* '^https?://'
  HAVING count(*) > 0
), '{}'::jsonb)
WHERE jsonb_typeof("content" -> 'actions') = 'array';
