CREATE TABLE "email_usage" (
	"organization_id" text NOT NULL,
	"month" date NOT NULL,
	"sent" integer DEFAULT 0 NOT NULL,
	"last_granted" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "email_usage_organization_id_month_pk" PRIMARY KEY("organization_id","month")
);
--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "plan" text DEFAULT 'self-hosted' NOT NULL;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "monthly_email_cap" integer;--> statement-breakpoint
ALTER TABLE "email_usage" ADD CONSTRAINT "email_usage_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;