ALTER TYPE "public"."campaign_status" ADD VALUE 'paused' BEFORE 'sent';--> statement-breakpoint
ALTER TYPE "public"."delivery_status" ADD VALUE 'paused' BEFORE 'sending';--> statement-breakpoint
ALTER TABLE "campaigns" ADD COLUMN "paused_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "campaigns" ADD COLUMN "pause_reason" text;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "paused_at" timestamp with time zone;