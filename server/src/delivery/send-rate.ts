// Provider send rates held across every worker: a rate key's slots reserved in PostgreSQL, or in Redis with REDIS_URL.
import type { Redis } from 'ioredis';
import type { Db } from '../db/database.js';
import { reserveSendSlots } from './send-rate.repository.js';

/** What a reservation got: how many of the slots asked for may be used now, and when the key's next slot frees. */
export interface SendSlots {
  granted: number;
  /** Milliseconds until the key's next free slot (0: free now). */
  waitMs: number;
}

/**
 * A rate shared by every worker, per key (a provider and its sender). Slots are spaced 1/perSecond apart and at most
 * one goes at any instant, so a provider never sees a burst beyond its documented rate: `granted` is 0 or 1. Only
 * what is granted is spent — a caller holds the rest, and asks again when `waitMs` has passed.
 */
export interface SendRate {
  reserve(key: string, slots: number, perSecond: number): Promise<SendSlots>;
}

export function postgresSendRate(db: Db): SendRate {
  return { reserve: (key, slots, perSecond) => reserveSendSlots(db, key, slots, perSecond) };
}

// The same reservation as send-rate.repository.ts, atomic as a script, on the Redis server's clock (microseconds). An
// idle key expires a second after its next slot: an absent key is a free one.
const RESERVE_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local nextFree = tonumber(redis.call('GET', KEYS[1]) or '0')
local granted = 0
if nextFree <= now then
  granted = math.min(tonumber(ARGV[1]), 1)
  nextFree = now + granted * tonumber(ARGV[2])
  redis.call('SET', KEYS[1], string.format('%.0f', nextFree), 'PX', math.ceil((nextFree - now) / 1000) + 1000)
end
return {granted, math.ceil((nextFree - now) / 1000)}`;

type ReservingRedis = Redis & { reserveSendSlots(key: string, slots: number, intervalMicros: number): Promise<[number, number]> };

/** Keys live under `herald:send-rate:`. */
export function redisSendRate(redis: Redis): SendRate {
  redis.defineCommand('reserveSendSlots', { numberOfKeys: 1, lua: RESERVE_SCRIPT });
  const reserving = redis as ReservingRedis;
  return {
    async reserve(key, slots, perSecond) {
      const [granted, waitMs] = await reserving.reserveSendSlots(`herald:send-rate:${key}`, slots, 1_000_000 / perSecond);
      return { granted, waitMs };
    },
  };
}
