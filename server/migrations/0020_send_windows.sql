CREATE TABLE "send_windows" (
	"key" text NOT NULL,
	"minute" timestamp with time zone NOT NULL,
	"sends" integer NOT NULL,
	CONSTRAINT "send_windows_key_minute_pk" PRIMARY KEY("key","minute")
);
