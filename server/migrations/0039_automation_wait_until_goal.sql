ALTER TABLE "automation_enrollments" ADD COLUMN "wait_event" text;--> statement-breakpoint
ALTER TABLE "automation_enrollments" ADD COLUMN "wait_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "automation_enrollments" ADD COLUMN "wait_matched_event_id" text;--> statement-breakpoint
ALTER TABLE "automation_versions" ADD COLUMN "goal" jsonb;