-- Email reachability was stored twice: per address in channel_addresses and mirrored on each subscriber carrying it
-- (email_status). The mirror goes; a subscriber's email status is now read from its address's row. First, what only
-- the mirror says moves to the address: per address, its subscribers' strongest word (a complaint, then a bounce,
-- then an unsubscribe), written as recordAddressStates writes it — over a reachable row and over a weaker reason
-- (manual < unsubscribed < bounced < complained).
WITH mirrored AS (
  SELECT DISTINCT ON (project_id, sandbox, lower(email)) project_id, sandbox, lower(email) AS address, email_status::text AS reason
  FROM subscribers
  WHERE email IS NOT NULL AND email_status IN ('unsubscribed', 'bounced', 'complained')
  ORDER BY project_id, sandbox, lower(email), array_position(ARRAY['unsubscribed', 'bounced', 'complained'], email_status::text) DESC
), states AS (
  SELECT project_id, sandbox, address, reason,
    CASE WHEN reason = 'bounced' THEN 'unreachable' ELSE 'opted_out' END::address_status AS status,
    CASE WHEN reason = 'unsubscribed' THEN 'recipient' ELSE 'provider' END AS source
  FROM mirrored
)
INSERT INTO channel_addresses AS a (project_id, sandbox, channel, address, status, status_reason, source, consent, consent_source, consent_at)
SELECT project_id, sandbox, 'email', address, status, reason, source,
  -- The person's own opt-out withdraws marketing consent too; a bounce leaves it.
  CASE WHEN status = 'opted_out' THEN 'unsubscribed' ELSE 'subscribed' END::marketing_consent,
  CASE WHEN status = 'opted_out' THEN source END,
  CASE WHEN status = 'opted_out' THEN now() END
FROM states
ON CONFLICT (project_id, sandbox, channel, address) DO UPDATE
SET status = excluded.status, status_reason = excluded.status_reason, source = excluded.source, updated_at = now(),
  consent = CASE WHEN excluded.status = 'opted_out' THEN 'unsubscribed' ELSE a.consent END,
  consent_source = CASE WHEN excluded.status = 'opted_out' THEN excluded.source ELSE a.consent_source END,
  consent_at = CASE WHEN excluded.status = 'opted_out' THEN now() ELSE a.consent_at END
WHERE a.status = 'reachable'
  OR array_position(ARRAY['manual', 'unsubscribed', 'bounced', 'complained'], excluded.status_reason)
     > coalesce(array_position(ARRAY['manual', 'unsubscribed', 'bounced', 'complained'], a.status_reason), 0);--> statement-breakpoint
ALTER TABLE "subscribers" DROP COLUMN "email_status";--> statement-breakpoint
DROP TYPE "public"."email_status";
