CREATE TABLE "channel_configs" (
	"project_id" text NOT NULL,
	"channel" "channel" NOT NULL,
	"provider" text NOT NULL,
	"settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"credentials" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "channel_configs_project_id_channel_pk" PRIMARY KEY("project_id","channel")
);
--> statement-breakpoint
ALTER TABLE "channel_configs" ADD CONSTRAINT "channel_configs_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Every project's VAPID pair moves into its push configuration. The private key is copied unsealed, marked
-- `plain:`: SQL does not hold the sealing key (HERALD_SECRET_KEY), so the first start after this migration seals it
-- (ChannelConfigService.sealUnsealed) before any other work.
INSERT INTO "channel_configs" ("project_id", "channel", "provider", "settings", "credentials")
SELECT "id", 'push', 'web-push', jsonb_build_object('vapidPublicKey', "vapid_public_key"),
       'plain:' || jsonb_build_object('vapidPrivateKey', "vapid_private_key")::text
FROM "projects";--> statement-breakpoint
ALTER TABLE "projects" DROP COLUMN "vapid_public_key";--> statement-breakpoint
ALTER TABLE "projects" DROP COLUMN "vapid_private_key";