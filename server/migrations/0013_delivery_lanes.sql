DROP INDEX "deliveries_due_idx";--> statement-breakpoint
CREATE INDEX "deliveries_due_idx" ON "deliveries" USING btree ("channel","next_attempt_at") WHERE "deliveries"."status" = 'queued';