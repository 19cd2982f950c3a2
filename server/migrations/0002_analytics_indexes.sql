DROP INDEX "subscribers_project_country_idx";--> statement-breakpoint
DROP INDEX "subscribers_project_platform_idx";--> statement-breakpoint
CREATE INDEX "subscribers_project_country_city_idx" ON "subscribers" USING btree ("project_id","country","city","status","sandbox");--> statement-breakpoint
CREATE INDEX "subscribers_project_device_mix_idx" ON "subscribers" USING btree ("project_id","platform","browser","os","device","status","sandbox");