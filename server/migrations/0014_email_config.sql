-- A project's email domain moves into its email configuration (provider `none` until one is chosen). Its empty
-- credentials are copied unsealed, marked `plain:` like migration 0011's: the first start seals them.
INSERT INTO "channel_configs" ("project_id", "channel", "provider", "settings", "credentials")
SELECT "id", 'email', 'none', jsonb_build_object('domain', "email_domain"), 'plain:{}'
FROM "projects" WHERE "email_domain" IS NOT NULL;--> statement-breakpoint
ALTER TABLE "projects" DROP COLUMN "email_domain";
