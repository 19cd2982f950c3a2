// SMS senders: provisioned per project and destination country, and the one chosen for a send.
import type { Db } from '../../db/database.js';
import type { SmsOptions, SmsSenderKind } from '../../db/schema.js';
import { allowsAlphanumericSender, ALPHANUMERIC_SENDER, senderCountries } from '../../delivery/index.js';
import { conflict, notFound, validationFailed } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { isUniqueViolation } from '../../db/pg-errors.js';
import type { ProjectScope } from '../tenancy.js';
import * as repo from './sms-sender.repository.js';

export interface SmsSenderInput {
  country: string;
  kind: SmsSenderKind;
  sender: string;
  ratePerSecond?: number | undefined;
}

export interface SmsSenderView {
  id: string;
  country: string;
  kind: SmsSenderKind;
  sender: string;
  ratePerSecond: number;
  createdAt: string;
}

/** Each kind's usual rate (Twilio: a long code ~1/s, toll-free ~3/s, a short code ~100/s); a sender may set its own. */
export const SENDER_RATES: Record<SmsSenderKind, number> = { alphanumeric: 10, long_code: 1, toll_free: 3, short_code: 100 };

/** Who a send goes from, or why none may be chosen. */
export type SenderChoice = { options: SmsOptions } | { refusal: 'unverified_sender_id' };

const view = (row: repo.SmsSenderRow): SmsSenderView => ({
  id: row.id,
  country: row.country,
  kind: row.kind,
  sender: row.sender,
  ratePerSecond: row.ratePerSecond ?? SENDER_RATES[row.kind],
  createdAt: row.createdAt.toISOString(),
});

/** The Messaging Service a project's Twilio settings name, with its rate: what sends where no sender is provisioned. */
export function messagingServiceOf(settings: Record<string, unknown> | undefined): { sid: string; ratePerSecond: number } | undefined {
  const { messagingServiceSid, messagingServiceRatePerSecond } = (settings ?? {}) as { messagingServiceSid?: string; messagingServiceRatePerSecond?: number };
  return messagingServiceSid === undefined ? undefined : { sid: messagingServiceSid, ratePerSecond: messagingServiceRatePerSecond ?? 1 };
}

export class SmsSenderService {
  constructor(private readonly db: Db) {}

  async list(scope: ProjectScope): Promise<{ data: SmsSenderView[] }> {
    return { data: (await repo.listSmsSenders(this.db, scope.projectId)).map(view) };
  }

  /** Provisions a sender for a country; an alphanumeric one only where the country's carriers show them. */
  async add(scope: ProjectScope, input: SmsSenderInput): Promise<SmsSenderView> {
    if (input.kind === 'alphanumeric' && !allowsAlphanumericSender(input.country)) {
      throw validationFailed([{ field: 'kind', error: `carriers in ${input.country} do not deliver from alphanumeric sender ids: provision a number` }]);
    }
    if (input.kind === 'alphanumeric' && !ALPHANUMERIC_SENDER.test(input.sender)) {
      throw validationFailed([{ field: 'sender', error: 'an alphanumeric sender id is 1–11 letters, digits or spaces, with at least one letter' }]);
    }
    try {
      const row = await repo.insertSmsSender(this.db, { id: newId('sms'), projectId: scope.projectId, ...input, ratePerSecond: input.ratePerSecond ?? null });
      return view(row);
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(`${input.sender} is already provisioned for ${input.country}`, 'sms_sender_exists');
      throw error;
    }
  }

  async remove(scope: ProjectScope, id: string): Promise<void> {
    if (!(await repo.deleteSmsSender(this.db, scope.projectId, id))) throw notFound('SMS sender');
  }

  /**
   * The sender of an SMS to `country`: with a `senderId` where the country shows alphanumeric ids, that id — it must
   * be provisioned for the country, else `unverified_sender_id`; otherwise (no `senderId`, or a country that shows
   * none, the US among them: the `senderId` is ignored) the first number provisioned for the country — a short code,
   * then toll-free, then a long code —, else the project's Messaging Service (`messagingServiceSid`), else
   * `unverified_sender_id`: nothing is provisioned to send to that country from. Guernsey, Jersey and the Isle of Man
   * (+44) take the senders provisioned for GB when none is provisioned for them.
   */
  async choose(projectId: string, country: string | undefined, senderId: string | undefined, messagingService: { sid: string; ratePerSecond: number } | undefined): Promise<SenderChoice> {
    let senders: repo.SmsSenderRow[] = [];
    for (const from of country === undefined ? [] : senderCountries(country)) {
      senders = await repo.listSmsSenders(this.db, projectId, from);
      if (senders.length > 0) break;
    }
    if (senderId !== undefined && country !== undefined && allowsAlphanumericSender(country)) {
      const named = senders.find((s) => s.kind === 'alphanumeric' && s.sender === senderId);
      return named ? { options: { from: named.sender, ratePerSecond: view(named).ratePerSecond } } : { refusal: 'unverified_sender_id' };
    }
    const preference: SmsSenderKind[] = ['short_code', 'toll_free', 'long_code'];
    const number = senders.filter((s) => s.kind !== 'alphanumeric').sort((a, b) => preference.indexOf(a.kind) - preference.indexOf(b.kind))[0];
    if (number) return { options: { from: number.sender, ratePerSecond: view(number).ratePerSecond } };
    if (messagingService) return { options: { messagingServiceSid: messagingService.sid, ratePerSecond: messagingService.ratePerSecond } };
    return { refusal: 'unverified_sender_id' };
  }
}
