// The deployment's secret box: HERALD_SECRET_KEY, else a key generated on first use and kept in the database.
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { instanceSecrets } from '../../db/schema.js';
import { createSecretBox, type SecretBox } from '../../shared/secret-box.js';

export interface Keyring {
  box(): Promise<SecretBox>;
}

/**
 * Resolved on first use, like the JWT secret: every instance reads the same stored key. A key kept in the database
 * protects nothing from whoever holds a dump of it, so production sets HERALD_SECRET_KEY (docs/ARCHITECTURE.md).
 */
export function createKeyring(db: Db, keys: Config['secretKey']): Keyring {
  let box: Promise<SecretBox> | undefined;
  const resolve = async () => {
    if (keys.current) return createSecretBox(keys.current, keys.previous);
    await db.insert(instanceSecrets).values({ name: 'secret_key', value: randomBytes(32).toString('base64url') }).onConflictDoNothing();
    const [row] = await db.select().from(instanceSecrets).where(eq(instanceSecrets.name, 'secret_key'));
    return createSecretBox(row!.value, keys.previous);
  };
  return {
    box: () =>
      (box ??= resolve().catch((error: unknown) => {
        box = undefined;
        throw error;
      })),
  };
}
