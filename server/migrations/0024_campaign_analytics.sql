-- Events logged so far take their delivery's message before the column becomes required.
ALTER TABLE "delivery_events" ADD COLUMN "message_id" text;--> statement-breakpoint
UPDATE "delivery_events" e SET "message_id" = d."message_id" FROM "deliveries" d WHERE d."id" = e."delivery_id";--> statement-breakpoint
ALTER TABLE "delivery_events" ALTER COLUMN "message_id" SET NOT NULL;--> statement-breakpoint
CREATE INDEX "delivery_events_message_idx" ON "delivery_events" USING btree ("message_id","type","occurred_at");
