ALTER TYPE "public"."delivery_event" ADD VALUE 'failed';--> statement-breakpoint
CREATE TABLE "sms_senders" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"country" text NOT NULL,
	"kind" text NOT NULL,
	"sender" text NOT NULL,
	"rate_per_second" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "sms_senders" ADD CONSTRAINT "sms_senders_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "sms_senders_project_country_sender_key" ON "sms_senders" USING btree ("project_id","country","sender");