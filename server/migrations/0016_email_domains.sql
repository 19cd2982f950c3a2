CREATE TYPE "public"."email_domain_status" AS ENUM('pending', 'verified', 'failing');--> statement-breakpoint
CREATE TABLE "email_domains" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"domain" text NOT NULL,
	"status" "email_domain_status" DEFAULT 'pending' NOT NULL,
	"ownership_token" text NOT NULL,
	"dkim_selector" text NOT NULL,
	"dkim_public_key" text NOT NULL,
	"ed25519_selector" text,
	"ed25519_public_key" text,
	"private_keys" text NOT NULL,
	"problems" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"verified_at" timestamp with time zone,
	"last_checked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "email_domains" ADD CONSTRAINT "email_domains_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "email_domains_project_domain_key" ON "email_domains" USING btree ("project_id","domain");