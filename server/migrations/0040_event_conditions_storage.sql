CREATE TABLE "event_totals" (
	"project_id" text NOT NULL,
	"sandbox" boolean NOT NULL,
	"name" text NOT NULL,
	"subscriber_id" text NOT NULL,
	"count" integer NOT NULL,
	"first_at" timestamp with time zone NOT NULL,
	"last_at" timestamp with time zone NOT NULL,
	CONSTRAINT "event_totals_project_id_sandbox_name_subscriber_id_pk" PRIMARY KEY("project_id","sandbox","name","subscriber_id")
);
--> statement-breakpoint
ALTER TABLE "event_totals" ADD CONSTRAINT "event_totals_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "event_totals" ADD CONSTRAINT "event_totals_subscriber_id_subscribers_id_fk" FOREIGN KEY ("subscriber_id") REFERENCES "public"."subscribers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "event_totals_project_name_count_idx" ON "event_totals" USING btree ("project_id","sandbox","name","count","subscriber_id");--> statement-breakpoint
CREATE INDEX "event_totals_subscriber_idx" ON "event_totals" USING btree ("subscriber_id");--> statement-breakpoint
CREATE INDEX "events_project_name_occurred_idx" ON "events" USING btree ("project_id","sandbox","name","occurred_at","subscriber_id");--> statement-breakpoint
CREATE INDEX "subscribers_project_people_idx" ON "subscribers" USING btree ("project_id","sandbox","status","id");--> statement-breakpoint
-- Hand-written: the totals of the events stored before this migration.
INSERT INTO "event_totals" ("project_id", "sandbox", "name", "subscriber_id", "count", "first_at", "last_at")
  SELECT "project_id", "sandbox", "name", "subscriber_id", count(*), min("occurred_at"), max("occurred_at") FROM "events"
  WHERE "subscriber_id" IS NOT NULL GROUP BY "project_id", "sandbox", "name", "subscriber_id";
