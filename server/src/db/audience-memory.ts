// The memory a statement over a whole audience may hash with, set for the caller's transaction only.
import { sql } from "drizzle-orm";
import type { Db } from "./database.js";

/**
 * Lets this transaction's statements hash sets of up to a few million people (work_mem 64 MB, hash_mem 256 MB).
 * A condition under `any` or NOT is a set PostgreSQL hashes once only if it guesses the set fits hash_mem — 8 MB by
 * default, about 100,000 people; past that it scans the set again for every person (docs/PERFORMANCE.md, "Targeting").
 */
export async function allowAudienceSets(tx: Db): Promise<void> {
  await tx.execute(
    sql`SELECT set_config('work_mem', '64MB', true), set_config('hash_mem_multiplier', '4', true)`,
  );
}
