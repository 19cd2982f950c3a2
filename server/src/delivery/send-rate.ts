// Provider send rates held across every worker: a rate key's slots booked, and its line of held deliveries, in PostgreSQL or in Redis.
import type { Redis } from 'ioredis';
import type { Db } from '../db/database.js';
import { lineUp, reserveSendSlots } from './send-rate.repository.js';

/**
 * What a reservation booked: `granted` consecutive slots, the first at `firstAt` (epoch milliseconds on this process's
 * clock) and each next one 1/perSecond later; `waitMs` is when the key's first slot nobody has booked comes.
 */
export interface SendSlots {
  granted: number;
  firstAt: number;
  waitMs: number;
}

/**
 * The store's clock seen from this process. A slot is an instant on the store's clock, and a worker must send at that
 * instant however late the answer reached it: its offset is estimated as NTP does, from the reservation with the
 * shortest round trip (error at most half of it). The best sample ages by a millisecond every 10 s, so a drifting
 * clock is followed, but one slow answer under load never replaces a fast one.
 */
export class StoreClock {
  private best = { roundTrip: Infinity, offset: 0, at: 0 };

  /** A reservation asked at `askedAt`, answered at `answeredAt` (both this process's), with the store's `storeNow`. */
  observe(askedAt: number, answeredAt: number, storeNow: number): void {
    const roundTrip = answeredAt - askedAt;
    if (roundTrip <= this.best.roundTrip + (answeredAt - this.best.at) / 10_000) {
      this.best = { roundTrip, offset: storeNow - (askedAt + answeredAt) / 2, at: answeredAt };
    }
  }

  toLocal(storeMs: number): number {
    return storeMs - this.best.offset;
  }
}

/**
 * A rate shared by every worker, per key (a provider and its sender). Slots are spaced 1/perSecond apart and each is
 * booked by one caller, who sends at its instant, so a provider never sees a burst beyond its documented rate. A
 * reservation books up to `slots` of those that start within `withinMs` from now (0: only one free now); the caller
 * holds the rest and asks again when `waitMs` has passed.
 */
export interface SendRate {
  reserve(key: string, slots: number, perSecond: number, withinMs: number): Promise<SendSlots>;
  /**
   * Gives `count` deliveries that found no slot turns in the key's line, after every slot booked and every turn
   * given before (so held deliveries come back one interval apart, not all at once): milliseconds until the first's
   * turn, each next one 1/perSecond later. A turn is when to ask again, not a slot.
   */
  line(key: string, count: number, perSecond: number): Promise<number>;
}

export function postgresSendRate(db: Db): SendRate {
  const clock = new StoreClock();
  return {
    async reserve(key, slots, perSecond, withinMs) {
      const askedAt = Date.now();
      const booked = await reserveSendSlots(db, key, slots, perSecond, withinMs);
      clock.observe(askedAt, Date.now(), booked.storeNow);
      return { granted: booked.granted, firstAt: clock.toLocal(booked.firstAt), waitMs: booked.waitMs };
    },
    line: (key, count, perSecond) => lineUp(db, key, count, perSecond),
  };
}

// The same booking as send-rate.repository.ts, atomic as a script, on the Redis server's clock (microseconds). An
// idle key expires a second after its next free slot: an absent key is a free one.
const RESERVE_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local interval = tonumber(ARGV[2])
local start = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now)
local granted = 0
if start - now <= tonumber(ARGV[3]) then
  granted = math.min(tonumber(ARGV[1]), math.floor((now + tonumber(ARGV[3]) - start) / interval) + 1)
  redis.call('SET', KEYS[1], string.format('%.0f', start + granted * interval), 'PX', math.ceil((start + granted * interval - now) / 1000) + 1000)
end
return {granted, string.format('%.0f', start), string.format('%.0f', now), math.ceil((start + granted * interval - now) / 1000)}`;

// The line's end lives beside the key (`…:line`), from the later of it and the next free slot.
const LINE_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local start = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), tonumber(redis.call('GET', KEYS[2]) or '0'), now)
local untilAt = start + tonumber(ARGV[1]) * tonumber(ARGV[2])
redis.call('SET', KEYS[2], string.format('%.0f', untilAt), 'PX', math.ceil((untilAt - now) / 1000) + 1000)
return math.ceil((start - now) / 1000)`;

type ReservingRedis = Redis & {
  reserveSendSlots(key: string, slots: number, intervalMicros: number, withinMicros: number): Promise<[number, string, string, number]>;
  lineUpSends(key: string, line: string, count: number, intervalMicros: number): Promise<number>;
};

/** Keys live under `herald:send-rate:`. */
export function redisSendRate(redis: Redis): SendRate {
  redis.defineCommand('reserveSendSlots', { numberOfKeys: 1, lua: RESERVE_SCRIPT });
  redis.defineCommand('lineUpSends', { numberOfKeys: 2, lua: LINE_SCRIPT });
  const reserving = redis as ReservingRedis;
  const clock = new StoreClock();
  return {
    async reserve(key, slots, perSecond, withinMs) {
      const askedAt = Date.now();
      const [granted, firstMicros, nowMicros, waitMs] = await reserving.reserveSendSlots(`herald:send-rate:${key}`, slots, 1_000_000 / perSecond, withinMs * 1000);
      clock.observe(askedAt, Date.now(), Number(nowMicros) / 1000);
      return { granted, firstAt: clock.toLocal(Number(firstMicros) / 1000), waitMs };
    },
    line: (key, count, perSecond) => reserving.lineUpSends(`herald:send-rate:${key}`, `herald:send-rate:${key}:line`, count, 1_000_000 / perSecond),
  };
}
