CREATE TYPE "public"."address_status" AS ENUM('reachable', 'opted_out', 'unreachable');--> statement-breakpoint
CREATE TABLE "channel_addresses" (
	"project_id" text NOT NULL,
	"sandbox" boolean NOT NULL,
	"channel" "channel" NOT NULL,
	"address" text NOT NULL,
	"status" "address_status" DEFAULT 'reachable' NOT NULL,
	"status_reason" text,
	"source" text,
	"last_inbound_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "channel_addresses_project_id_sandbox_channel_address_pk" PRIMARY KEY("project_id","sandbox","channel","address")
);
--> statement-breakpoint
CREATE TABLE "send_rates" (
	"key" text PRIMARY KEY NOT NULL,
	"next_free_at" timestamp with time zone NOT NULL,
	"last_granted" integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE "channel_addresses" ADD CONSTRAINT "channel_addresses_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "deliveries_destination_idx" ON "deliveries" USING btree ("destination","sent_at") WHERE "deliveries"."destination" IS NOT NULL;