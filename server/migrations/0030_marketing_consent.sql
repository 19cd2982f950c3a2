CREATE TYPE "public"."marketing_consent" AS ENUM('subscribed', 'transactional', 'unsubscribed');--> statement-breakpoint
ALTER TABLE "channel_addresses" ADD COLUMN "consent" "marketing_consent" DEFAULT 'subscribed' NOT NULL;--> statement-breakpoint
ALTER TABLE "channel_addresses" ADD COLUMN "consent_source" text;--> statement-breakpoint
ALTER TABLE "channel_addresses" ADD COLUMN "consent_at" timestamp with time zone;--> statement-breakpoint
-- Backfill: a receipt is not consent to marketing. A contact a transactional send created (no push subscription, no
-- externalId, tags or attributes the project gave it, and its first delivery a transactional message made within a
-- minute of it) makes its address `transactional` on the channel(s) of that send's address — unless another
-- subscriber of the environment carries the address. Every other address stays `subscribed` (no row, or the default).
WITH made AS (
  SELECT s.id, s.project_id, s.sandbox, s.email, s.phone, m.channel
  FROM subscribers s
  CROSS JOIN LATERAL (SELECT d.message_id, d.created_at FROM deliveries d WHERE d.subscriber_id = s.id ORDER BY d.id LIMIT 1) f
  JOIN messages m ON m.id = f.message_id
  WHERE s.endpoint IS NULL AND s.external_id IS NULL AND s.tags = '{}' AND s.attributes = '{}'::jsonb
    AND m.source = 'transactional' AND f.created_at BETWEEN s.created_at - interval '1 minute' AND s.created_at + interval '1 minute'
), addresses AS (
  SELECT DISTINCT project_id, sandbox, 'email'::channel AS channel, lower(email) AS address FROM made WHERE channel = 'email' AND email IS NOT NULL
  UNION
  SELECT DISTINCT made.project_id, made.sandbox, c.channel, made.phone FROM made CROSS JOIN (VALUES ('sms'::channel), ('whatsapp'::channel)) AS c(channel)
  WHERE made.channel IN ('sms', 'whatsapp') AND made.phone IS NOT NULL
)
INSERT INTO channel_addresses AS a (project_id, sandbox, channel, address, consent, consent_source, consent_at)
SELECT x.project_id, x.sandbox, x.channel, x.address, 'transactional', 'transactional', now() FROM addresses x
WHERE NOT EXISTS (
  SELECT 1 FROM subscribers o
  WHERE o.project_id = x.project_id AND o.sandbox = x.sandbox
    AND (CASE WHEN x.channel = 'email' THEN lower(o.email) = x.address ELSE o.phone = x.address END)
    AND NOT EXISTS (SELECT 1 FROM made WHERE made.id = o.id)
)
ON CONFLICT (project_id, sandbox, channel, address) DO UPDATE
SET consent = 'transactional', consent_source = 'transactional', consent_at = now();--> statement-breakpoint
-- The person's own opt-outs (an unsubscribe, a complaint, an SMS STOP, a WhatsApp stop; not a manual suppression)
-- withdrew marketing consent too.
UPDATE channel_addresses SET consent = 'unsubscribed', consent_source = coalesce(source, 'recipient'), consent_at = updated_at
WHERE status = 'opted_out' AND status_reason IS DISTINCT FROM 'manual';
