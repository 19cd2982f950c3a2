DROP INDEX "campaigns_project_created_idx";--> statement-breakpoint
ALTER TABLE "campaigns" ADD COLUMN "channel" text DEFAULT 'push' NOT NULL;--> statement-breakpoint
ALTER TABLE "campaigns" ADD COLUMN "local_time" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "campaigns_project_created_idx" ON "campaigns" USING btree ("project_id","channel","created_at","id");