CREATE TYPE "public"."attribute_source" AS ENUM('inferred', 'declared');--> statement-breakpoint
CREATE TYPE "public"."attribute_type" AS ENUM('text', 'number', 'boolean', 'date');--> statement-breakpoint
CREATE TABLE "subscriber_attributes" (
	"project_id" text NOT NULL,
	"sandbox" boolean NOT NULL,
	"name" text NOT NULL,
	"type" "attribute_type" NOT NULL,
	"source" "attribute_source" NOT NULL,
	"first_seen_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "subscriber_attributes_project_id_sandbox_name_pk" PRIMARY KEY("project_id","sandbox","name")
);
--> statement-breakpoint
ALTER TABLE "subscriber_attributes" ADD CONSTRAINT "subscriber_attributes_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;