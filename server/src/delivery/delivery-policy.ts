// A channel's delivery policy (quiet hours, frequency cap) as pure decisions, for transactional sends and campaigns.
import { DateTime, IANAZone } from 'luxon';
import type { ChannelDeliveryPolicy } from '../db/schema.js';

export type PolicyDecision =
  | { allowed: true }
  /** `until`: when the quiet hours end, so a campaign can hold the push until then. */
  | { allowed: false; reason: 'quiet_hours'; until: Date }
  | { allowed: false; reason: 'frequency_capped' };

/** What the policy needs to know of one recipient (a push device, or an address). */
export interface PolicySubject {
  /** IANA zone its local time is read in (see `localZone`). */
  zone: string;
  /** Messages of the channel it got within the cap window, plus those in flight (`recentSendCounts`). */
  recentSends: number;
}

/** The subscriber's own zone, else the project's default zone, else UTC (a zone this runtime does not know is skipped). */
export function localZone(subscriberZone: string | null | undefined, projectZone: string | undefined): string {
  for (const zone of [subscriberZone, projectZone]) {
    if (zone && IANAZone.isValidZone(zone)) return zone;
  }
  return 'UTC';
}

const minuteOfDay = (time: string) => {
  const [hours, minutes] = time.split(':').map(Number) as [number, number];
  return hours * 60 + minutes;
};

/**
 * When the quiet hours that hold `now` end, or undefined when `now` is outside them. Start and end are local wall
 * times in `zone`: the window may wrap midnight (22:00–07:00), and its end is the wall time on that local day, so
 * it stays right across a DST change (an end that falls in a spring-forward gap moves forward with the clocks).
 * Start equal to end is an empty window; project settings refuse it.
 */
export function quietHoursEnd(quietHours: { start: string; end: string }, zone: string, now: Date): Date | undefined {
  const local = DateTime.fromJSDate(now, { zone });
  const minute = local.hour * 60 + local.minute;
  const start = minuteOfDay(quietHours.start);
  const end = minuteOfDay(quietHours.end);
  const quiet = start <= end ? start <= minute && minute < end : minute >= start || minute < end;
  if (!quiet) return undefined;
  const day = start > end && minute >= start ? local.plus({ days: 1 }) : local;
  return DateTime.fromObject(
    { year: day.year, month: day.month, day: day.day, hour: Math.floor(end / 60), minute: end % 60 },
    { zone },
  ).toJSDate();
}

/** Where the frequency cap window of a push sent at `now` starts, or undefined when the project has no cap. */
export function capWindowStart(policy: ChannelDeliveryPolicy | undefined, now: Date): Date | undefined {
  const cap = policy?.frequencyCap;
  return cap ? new Date(now.getTime() - cap.windowSeconds * 1000) : undefined;
}

/**
 * May one more push go to this subscriber now? Quiet hours are checked first: a push held for them is judged
 * against the cap again when it goes out.
 */
export function checkDeliveryPolicy(policy: ChannelDeliveryPolicy | undefined, subject: PolicySubject, now: Date): PolicyDecision {
  if (policy?.quietHours) {
    const until = quietHoursEnd(policy.quietHours, subject.zone, now);
    if (until) return { allowed: false, reason: 'quiet_hours', until };
  }
  if (policy?.frequencyCap && subject.recentSends >= policy.frequencyCap.max) return { allowed: false, reason: 'frequency_capped' };
  return { allowed: true };
}
