// The write half of sending now: the delivery policy, the monthly email cap, the message and its claimed deliveries,
// in the caller's transaction. Every transactional send goes through it (DeliveryEngine.send, .hold).
import type { Db } from '../db/database.js';
import type { PolicyDecision } from './delivery-policy.js';
import { decidePolicy } from './delivery-policy.repository.js';
import {
  insertClaimed,
  insertMessage,
  insertSingleSends,
  type ClaimedDelivery,
  type DeliveryTarget,
  type MessageRecord,
  type SendingProject,
  type SingleSend,
} from './delivery.repository.js';
import { reserveEmailQuota } from './email-quota.repository.js';

/** One recipient of a send now: a push device (no destination), or an address one subscriber holds. */
export interface SendTarget extends DeliveryTarget {
  /** The subscriber's own zone, for quiet hours; the project's stands in. */
  timezone: string | null;
}

/** A message and its recipients, checked and written together. */
export interface SendUnit {
  message: MessageRecord;
  project: SendingProject;
  targets: readonly SendTarget[];
}

/** Why a send now was refused before anything was written: the delivery policy, or the monthly email cap. */
export type SendRefusal = Extract<PolicyDecision, { allowed: false }>['reason'] | 'monthly_cap_reached';

/** What the write made of one target: refused, or written with its delivery claimed (and one email drawn from the cap). */
export type Hold = { refusal: SendRefusal } | { claimed: ClaimedDelivery; drawn: boolean };

/**
 * Checks and writes units in the caller's transaction, answering each target in order: the project's delivery policy
 * (per device for push, per address otherwise), then the monthly cap where `capped` says so (live email; a policy
 * refusal draws nothing), then the messages with their deliveries claimed for the inline send. Projects are taken in
 * one order, so two transactions never take each other's cap locks in a cycle; the policy's and the cap's locks are
 * held to the commit, so a concurrent send counts these as in flight.
 */
export async function holdSends(
  tx: Db,
  units: readonly SendUnit[],
  { now, leaseSeconds, capped: isCapped }: { now: Date; leaseSeconds: number; capped: (message: MessageRecord) => boolean },
): Promise<Hold[][]> {
  const holds: Hold[][] = units.map((unit) => new Array<Hold>(unit.targets.length));
  // One policy decision and one cap reservation per project and channel, however many sends arrived together.
  const groups = new Map<string, { u: number; t: number }[]>();
  units.forEach(({ message, project, targets }, u) => {
    const key = `${project.id}\u0000${message.channel}`;
    const group = groups.get(key) ?? groups.set(key, []).get(key)!;
    targets.forEach((_, t) => group.push({ u, t }));
  });
  const going: { u: number; t: number; drawn: boolean }[] = [];
  for (const key of [...groups.keys()].sort()) {
    const group = groups.get(key)!;
    const { message, project } = units[group[0]!.u]!;
    const decisions = await decidePolicy(
      tx,
      project,
      message.channel,
      group.map(({ u, t }) => {
        const target = units[u]!.targets[t]!;
        return { recipient: target.destination ?? target.subscriberId, timezone: target.timezone };
      }),
      now,
    );
    const allowed = group.filter(({ u, t }, k) => {
      const decision = decisions[k]!;
      if (!decision.allowed) holds[u]![t] = { refusal: decision.reason };
      return decision.allowed;
    });
    const capped = allowed.filter(({ u }) => isCapped(units[u]!.message));
    const { granted } = await reserveEmailQuota(tx, project.id, capped.length, now);
    const refused = new Set(capped.slice(granted));
    for (const sent of allowed) {
      if (refused.has(sent)) holds[sent.u]![sent.t] = { refusal: 'monthly_cap_reached' };
      else going.push({ ...sent, drawn: isCapped(units[sent.u]!.message) });
    }
  }

  // A message with one recipient (every email, SMS and WhatsApp send) goes with the others in one statement; a push to
  // several devices of a person is one message with a delivery each.
  const perMessage = new Map<number, typeof going>();
  for (const g of going) (perMessage.get(g.u) ?? perMessage.set(g.u, []).get(g.u)!).push(g);
  const single: SingleSend[] = [];
  const singles: typeof going = [];
  for (const [u, gs] of perMessage) {
    const { message, targets } = units[u]!;
    if (gs.length === 1) {
      single.push({ message, recipient: { subscriberId: targets[gs[0]!.t]!.subscriberId, destination: targets[gs[0]!.t]!.destination } });
      singles.push(gs[0]!);
      continue;
    }
    await insertMessage(tx, message);
    const claimed = await insertClaimed(tx, message, gs.map(({ t }) => ({ subscriberId: targets[t]!.subscriberId, destination: targets[t]!.destination })), leaseSeconds);
    gs.forEach(({ t, drawn }, k) => (holds[u]![t] = { claimed: claimed[k]!, drawn }));
  }
  const claimed = await insertSingleSends(tx, single, leaseSeconds);
  singles.forEach(({ u, t, drawn }, k) => (holds[u]![t] = { claimed: claimed[k]!, drawn }));
  return holds;
}
