CREATE TYPE "public"."api_key_scope" AS ENUM('server', 'publishable');--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "scope" "api_key_scope" DEFAULT 'server' NOT NULL;--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "identity_secret" text;