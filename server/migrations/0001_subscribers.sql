CREATE TYPE "public"."email_status" AS ENUM('none', 'active', 'verified', 'unsubscribed', 'bounced', 'complained');--> statement-breakpoint
CREATE TYPE "public"."subscriber_browser" AS ENUM('Chrome', 'Safari', 'Firefox', 'Edge');--> statement-breakpoint
CREATE TYPE "public"."subscriber_os" AS ENUM('macOS', 'Windows', 'iOS', 'Android');--> statement-breakpoint
CREATE TYPE "public"."subscriber_platform" AS ENUM('desktop', 'mobile', 'tablet');--> statement-breakpoint
CREATE TYPE "public"."subscriber_status" AS ENUM('active', 'inactive', 'unsubscribed');--> statement-breakpoint
CREATE TABLE "segments" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"filters" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "subscribers" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"token" text NOT NULL,
	"endpoint" text,
	"p256dh" text,
	"auth" text,
	"user_agent" text,
	"platform" "subscriber_platform",
	"browser" "subscriber_browser",
	"os" "subscriber_os",
	"device" text,
	"country" text,
	"city" text,
	"language" text,
	"timezone" text,
	"external_id" text,
	"email" text,
	"phone" text,
	"email_status" "email_status" DEFAULT 'none' NOT NULL,
	"status" "subscriber_status" DEFAULT 'active' NOT NULL,
	"sandbox" boolean DEFAULT false NOT NULL,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL,
	"attributes" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"preferences" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"subscribed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "segments" ADD CONSTRAINT "segments_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "subscribers" ADD CONSTRAINT "subscribers_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "segments_project_idx" ON "segments" USING btree ("project_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "subscribers_token_key" ON "subscribers" USING btree ("token");--> statement-breakpoint
CREATE UNIQUE INDEX "subscribers_project_endpoint_key" ON "subscribers" USING btree ("project_id","endpoint");--> statement-breakpoint
CREATE INDEX "subscribers_project_external_id_idx" ON "subscribers" USING btree ("project_id","external_id");--> statement-breakpoint
CREATE INDEX "subscribers_project_email_idx" ON "subscribers" USING btree ("project_id",lower("email"));--> statement-breakpoint
CREATE INDEX "subscribers_project_created_idx" ON "subscribers" USING btree ("project_id","created_at","id");--> statement-breakpoint
CREATE INDEX "subscribers_project_last_seen_idx" ON "subscribers" USING btree ("project_id","last_seen_at");--> statement-breakpoint
CREATE INDEX "subscribers_project_subscribed_idx" ON "subscribers" USING btree ("project_id","subscribed_at");--> statement-breakpoint
CREATE INDEX "subscribers_project_country_idx" ON "subscribers" USING btree ("project_id","country");--> statement-breakpoint
CREATE INDEX "subscribers_project_city_idx" ON "subscribers" USING btree ("project_id","city");--> statement-breakpoint
CREATE INDEX "subscribers_project_platform_idx" ON "subscribers" USING btree ("project_id","platform");--> statement-breakpoint
CREATE INDEX "subscribers_project_browser_idx" ON "subscribers" USING btree ("project_id","browser");--> statement-breakpoint
CREATE INDEX "subscribers_project_os_idx" ON "subscribers" USING btree ("project_id","os");--> statement-breakpoint
CREATE INDEX "subscribers_project_device_idx" ON "subscribers" USING btree ("project_id","device");--> statement-breakpoint
CREATE INDEX "subscribers_project_status_idx" ON "subscribers" USING btree ("project_id","status");--> statement-breakpoint
CREATE INDEX "subscribers_tags_idx" ON "subscribers" USING gin ("tags");