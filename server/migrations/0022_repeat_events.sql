DROP INDEX "delivery_events_delivery_type_key";--> statement-breakpoint
ALTER TABLE "delivery_events" ADD COLUMN "repeat" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "delivery_events" ADD COLUMN "source_event_id" text;--> statement-breakpoint
CREATE UNIQUE INDEX "delivery_events_source_key" ON "delivery_events" USING btree ("delivery_id","type","source_event_id");--> statement-breakpoint
CREATE UNIQUE INDEX "delivery_events_first_key" ON "delivery_events" USING btree ("delivery_id","type") WHERE NOT "delivery_events"."repeat";--> statement-breakpoint
ALTER TABLE "delivery_events" ADD CONSTRAINT "delivery_events_repeat_check" CHECK (NOT "delivery_events"."repeat" OR "delivery_events"."type" IN ('opened', 'clicked'));--> statement-breakpoint
-- SES events logged so far name their SNS message in the detail: it becomes their replay key, so a notification SNS
-- sends again after this migration still adds nothing.
UPDATE "delivery_events" SET "source_event_id" = "detail"->>'snsMessageId', "detail" = "detail" - 'snsMessageId' WHERE "detail" ? 'snsMessageId';
