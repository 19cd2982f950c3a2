CREATE TYPE "public"."campaign_status" AS ENUM('draft', 'scheduled', 'sending', 'sent', 'cancelled', 'failed', 'archived');--> statement-breakpoint
CREATE TABLE "campaigns" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"status" "campaign_status" NOT NULL,
	"mode" text NOT NULL,
	"sandbox" boolean NOT NULL,
	"content" jsonb NOT NULL,
	"segment" jsonb NOT NULL,
	"pending_segment_id" text,
	"send_at" timestamp with time zone,
	"timezone" text,
	"utm" jsonb,
	"message_id" text,
	"audience_size" integer DEFAULT 0 NOT NULL,
	"snapshot_at" timestamp with time zone,
	"failure_reason" text,
	"resent_from" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"cancelled_at" timestamp with time zone,
	"archived_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "message_stats" (
	"message_id" text PRIMARY KEY NOT NULL,
	"queued" integer DEFAULT 0 NOT NULL,
	"sent" integer DEFAULT 0 NOT NULL,
	"delivered" integer DEFAULT 0 NOT NULL,
	"clicked" integer DEFAULT 0 NOT NULL,
	"dismissed" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"suppressed" integer DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "cancelled_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_pending_segment_id_segments_id_fk" FOREIGN KEY ("pending_segment_id") REFERENCES "public"."segments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_message_id_messages_id_fk" FOREIGN KEY ("message_id") REFERENCES "public"."messages"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "message_stats" ADD CONSTRAINT "message_stats_message_id_messages_id_fk" FOREIGN KEY ("message_id") REFERENCES "public"."messages"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "campaigns_project_created_idx" ON "campaigns" USING btree ("project_id","created_at","id");--> statement-breakpoint
CREATE INDEX "campaigns_pending_segment_idx" ON "campaigns" USING btree ("pending_segment_id");--> statement-breakpoint
CREATE INDEX "campaigns_message_idx" ON "campaigns" USING btree ("message_id");--> statement-breakpoint
CREATE INDEX "campaigns_open_idx" ON "campaigns" USING btree ("status") WHERE "campaigns"."status" IN ('scheduled', 'sending');