CREATE TABLE "attribute_values" (
	"subscriber_id" text NOT NULL,
	"project_id" text NOT NULL,
	"sandbox" boolean NOT NULL,
	"name" text NOT NULL,
	"text" text,
	"long" boolean NOT NULL,
	"number" numeric,
	"at" timestamp with time zone,
	CONSTRAINT "attribute_values_subscriber_id_name_pk" PRIMARY KEY("subscriber_id","name")
);
--> statement-breakpoint
CREATE INDEX "attribute_values_text_idx" ON "attribute_values" USING btree ("project_id","sandbox","name","text","subscriber_id") WHERE "attribute_values"."text" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "attribute_values_number_idx" ON "attribute_values" USING btree ("project_id","sandbox","name","number","subscriber_id") WHERE "attribute_values"."number" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "attribute_values_at_idx" ON "attribute_values" USING btree ("project_id","sandbox","name","at","subscriber_id") WHERE "attribute_values"."at" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "attribute_values_long_idx" ON "attribute_values" USING btree ("project_id","sandbox","name","subscriber_id") WHERE "attribute_values"."long";