CREATE TYPE "public"."delivery_event" AS ENUM('delivered', 'opened', 'clicked', 'dismissed', 'unsubscribed', 'complained', 'bounced');--> statement-breakpoint
ALTER TYPE "public"."delivery_status" ADD VALUE 'opened' BEFORE 'clicked';--> statement-breakpoint
ALTER TYPE "public"."delivery_status" ADD VALUE 'unsubscribed' BEFORE 'failed';--> statement-breakpoint
ALTER TYPE "public"."delivery_status" ADD VALUE 'complained' BEFORE 'failed';--> statement-breakpoint
ALTER TYPE "public"."delivery_status" ADD VALUE 'bounced' BEFORE 'failed';--> statement-breakpoint
CREATE TABLE "delivery_events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "delivery_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"delivery_id" bigint NOT NULL,
	"project_id" text NOT NULL,
	"type" "delivery_event" NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"detail" jsonb
);
--> statement-breakpoint
ALTER TABLE "deliveries" ADD COLUMN "channel" "channel" DEFAULT 'push' NOT NULL;--> statement-breakpoint
ALTER TABLE "deliveries" ADD COLUMN "destination" text;--> statement-breakpoint
ALTER TABLE "deliveries" ADD COLUMN "opened_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "message_stats" ADD COLUMN "opened" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "message_stats" ADD COLUMN "unsubscribed" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "message_stats" ADD COLUMN "complained" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "message_stats" ADD COLUMN "bounced" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "delivery_events" ADD CONSTRAINT "delivery_events_delivery_id_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."deliveries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- The log starts with what deliveries already recorded, so it holds every event a delivery had.
INSERT INTO "delivery_events" ("delivery_id", "project_id", "type", "occurred_at")
SELECT "id", "project_id", 'delivered'::"delivery_event", "delivered_at" FROM "deliveries" WHERE "delivered_at" IS NOT NULL
UNION ALL SELECT "id", "project_id", 'clicked'::"delivery_event", "clicked_at" FROM "deliveries" WHERE "clicked_at" IS NOT NULL
UNION ALL SELECT "id", "project_id", 'dismissed'::"delivery_event", "dismissed_at" FROM "deliveries" WHERE "dismissed_at" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "delivery_events_delivery_type_key" ON "delivery_events" USING btree ("delivery_id","type");--> statement-breakpoint
CREATE INDEX "delivery_events_project_idx" ON "delivery_events" USING btree ("project_id","occurred_at");--> statement-breakpoint
CREATE UNIQUE INDEX "deliveries_message_destination_key" ON "deliveries" USING btree ("message_id","destination") WHERE "deliveries"."destination" IS NOT NULL;