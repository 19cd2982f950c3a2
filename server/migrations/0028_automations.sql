CREATE TABLE "automation_enrollments" (
	"id" text PRIMARY KEY DEFAULT 'enr_' || lpad(to_hex((extract(epoch from clock_timestamp()) * 1000)::bigint), 12, '0') || substr(md5(random()::text), 1, 16) NOT NULL,
	"project_id" text NOT NULL,
	"automation_id" text NOT NULL,
	"version" integer NOT NULL,
	"subscriber_id" text NOT NULL,
	"state" text DEFAULT 'active' NOT NULL,
	"step_id" text,
	"due_at" timestamp with time zone DEFAULT now() NOT NULL,
	"locked_by" text,
	"locked_until" timestamp with time zone,
	"lock_version" integer DEFAULT 0 NOT NULL,
	"event_id" text,
	"event_properties" jsonb,
	"reason" text,
	"enrolled_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "automation_step_runs" (
	"enrollment_id" text NOT NULL,
	"automation_id" text NOT NULL,
	"step_id" text NOT NULL,
	"step_type" text NOT NULL,
	"entered_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone,
	"outcome" text,
	"message_id" text,
	CONSTRAINT "automation_step_runs_enrollment_id_step_id_pk" PRIMARY KEY("enrollment_id","step_id")
);
--> statement-breakpoint
CREATE TABLE "automation_versions" (
	"automation_id" text NOT NULL,
	"version" integer NOT NULL,
	"trigger" jsonb NOT NULL,
	"steps" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "automation_versions_automation_id_version_pk" PRIMARY KEY("automation_id","version")
);
--> statement-breakpoint
CREATE TABLE "automations" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"sandbox" boolean DEFAULT false NOT NULL,
	"name" text NOT NULL,
	"state" text DEFAULT 'draft' NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"trigger_type" text NOT NULL,
	"event_name" text,
	"starter" text,
	"evaluated_until" timestamp with time zone,
	"activated_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"sandbox" boolean NOT NULL,
	"name" text NOT NULL,
	"subscriber_id" text,
	"identity" jsonb NOT NULL,
	"properties" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"event_key" text
);
--> statement-breakpoint
ALTER TABLE "deliveries" ADD COLUMN "provider_error" text;--> statement-breakpoint
ALTER TABLE "automation_enrollments" ADD CONSTRAINT "automation_enrollments_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "automation_enrollments" ADD CONSTRAINT "automation_enrollments_automation_id_automations_id_fk" FOREIGN KEY ("automation_id") REFERENCES "public"."automations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "automation_enrollments" ADD CONSTRAINT "automation_enrollments_subscriber_id_subscribers_id_fk" FOREIGN KEY ("subscriber_id") REFERENCES "public"."subscribers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "automation_step_runs" ADD CONSTRAINT "automation_step_runs_enrollment_id_automation_enrollments_id_fk" FOREIGN KEY ("enrollment_id") REFERENCES "public"."automation_enrollments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "automation_versions" ADD CONSTRAINT "automation_versions_automation_id_automations_id_fk" FOREIGN KEY ("automation_id") REFERENCES "public"."automations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "automations" ADD CONSTRAINT "automations_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_subscriber_id_subscribers_id_fk" FOREIGN KEY ("subscriber_id") REFERENCES "public"."subscribers"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "automation_enrollments_automation_subscriber_key" ON "automation_enrollments" USING btree ("automation_id","subscriber_id");--> statement-breakpoint
CREATE INDEX "automation_enrollments_due_idx" ON "automation_enrollments" USING btree ("automation_id","due_at") WHERE "automation_enrollments"."state" IN ('active', 'waiting');--> statement-breakpoint
CREATE INDEX "automation_enrollments_automation_idx" ON "automation_enrollments" USING btree ("automation_id","state","enrolled_at");--> statement-breakpoint
CREATE INDEX "automation_step_runs_automation_idx" ON "automation_step_runs" USING btree ("automation_id","step_id");--> statement-breakpoint
CREATE INDEX "automations_project_idx" ON "automations" USING btree ("project_id","created_at");--> statement-breakpoint
CREATE INDEX "automations_trigger_idx" ON "automations" USING btree ("project_id","trigger_type","event_name") WHERE "automations"."state" = 'active';--> statement-breakpoint
CREATE UNIQUE INDEX "events_project_key" ON "events" USING btree ("project_id","sandbox","event_key") WHERE "events"."event_key" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "events_project_received_idx" ON "events" USING btree ("project_id","sandbox","received_at");--> statement-breakpoint
CREATE INDEX "events_project_name_idx" ON "events" USING btree ("project_id","sandbox","name","received_at");--> statement-breakpoint
CREATE INDEX "events_subscriber_idx" ON "events" USING btree ("subscriber_id","received_at");