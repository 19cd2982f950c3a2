// The users as organizations and the CLI find and create them: the only way to a user row from outside auth.
import type { Db } from '../../db/database.js';
import type { users } from '../../db/schema.js';
import * as repo from './user.repository.js';

export type { UserRow } from './user.repository.js';

/** Each call takes the connection or the transaction it runs in: invitations create a user with their membership. */
export interface UserDirectory {
  findByEmail(db: Db, email: string): Promise<repo.UserRow | undefined>;
  findById(db: Db, userId: string): Promise<repo.UserRow | undefined>;
  /** `passwordHash` from `hashPassword`. */
  create(db: Db, user: typeof users.$inferInsert): Promise<repo.UserRow>;
  /** `passwordHash` from `hashPassword` (the operator's `herald admin set-password`). */
  setPassword(db: Db, userId: string, passwordHash: string): Promise<void>;
}

export const userDirectory: UserDirectory = {
  findByEmail: repo.findUserByEmail,
  findById: repo.findUserById,
  create: repo.insertUser,
  setPassword: repo.updatePasswordHash,
};
