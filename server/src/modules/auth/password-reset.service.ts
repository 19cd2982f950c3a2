// Password reset by email: a one-hour, single-use link mailed through a project of the user's organizations, and the
// new password set with its secret. Asking never says whether the address has an account.
import type { Logger } from 'pino';
import type { Db } from '../../db/database.js';
import { AppError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { randomToken, sha256 } from '../../shared/secrets.js';
import type { AccountMailService } from '../account-mail/index.js';
import { passwordResetEmail } from './password-reset-email.js';
import * as repo from './password-reset.repository.js';
import { hashPassword } from './password.js';
import * as users from './user.repository.js';

export const RESET_TTL_MINUTES = 60;
/** A second request for the same account within this long sends nothing (the first link still works). */
export const RESET_REQUEST_INTERVAL_SECONDS = 60;
const TOKEN_PREFIX = 'hrd_rst_';

const invalidToken = () => new AppError(400, 'reset_token_invalid', 'This reset link is unknown, expired or already used: ask for a new one');

export class PasswordResetService {
  /** Requests being handled after their answer (tests and shutdown wait for them). */
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly options: { publicUrl: string; clock: () => Date; accountMail: AccountMailService; logger?: Logger | undefined },
  ) {}

  /**
   * Handled after the caller is answered, so that neither the answer nor its timing tells whether the address has an
   * account: an unknown address, a request too soon after the last, or no project able to send is only logged.
   */
  request(email: string): void {
    const work = this.send(email)
      .catch((error: unknown) => this.options.logger?.error({ err: error }, 'password reset request failed'))
      .finally(() => this.pending.delete(work));
    this.pending.add(work);
  }

  /** Resolves once every request made so far is handled. */
  async settled(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  /** Sets the password with a reset link's secret; 400 `reset_token_invalid` for an unknown, expired or used one. */
  async confirm(token: string, password: string): Promise<void> {
    const row = await repo.findResetByTokenHash(this.db, sha256(token));
    const now = this.options.clock();
    if (!row || row.usedAt || row.expiresAt.getTime() <= now.getTime()) throw invalidToken();
    if (!(await repo.useReset(this.db, row.userId, row.id, await hashPassword(password), now))) throw invalidToken();
  }

  private async send(email: string): Promise<void> {
    const log = this.options.logger;
    const user = await users.findUserByEmail(this.db, email);
    if (!user) return;
    const now = this.options.clock();
    const last = await repo.lastRequestedAt(this.db, user.id);
    if (last && now.getTime() - last.getTime() < RESET_REQUEST_INTERVAL_SECONDS * 1000) {
      log?.info({ userId: user.id }, 'password reset asked again too soon: nothing sent');
      return;
    }
    const token = `${TOKEN_PREFIX}${randomToken(32)}`;
    await repo.replaceReset(this.db, {
      id: newId('pwr'),
      userId: user.id,
      tokenHash: sha256(token),
      createdAt: now,
      expiresAt: new Date(now.getTime() + RESET_TTL_MINUTES * 60_000),
    });
    const organizations = await users.listUserOrganizations(this.db, user.id);
    const url = `${this.options.publicUrl}/app/reset?token=${encodeURIComponent(token)}`;
    const mail = await this.options.accountMail.send(
      organizations.map((o) => o.id),
      passwordResetEmail(user.email, url, RESET_TTL_MINUTES),
    );
    if (!mail.emailed) log?.warn({ userId: user.id, problem: mail.problem }, 'password reset not emailed: an ADMIN must set up email in a project of the user’s organization');
  }
}
