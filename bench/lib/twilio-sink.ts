// The SMS benchmark's Twilio in its own process: the tests' fake (auth, form fields, StatusCallback checked) with each
// message kept as its sender and arrival only, so the clock a sender's rate is judged by shares an event loop with
// neither the load generator nor a heap of 100,000 messages (its pauses would bunch arrivals that left apart).
import { startTwilioPeer, type TwilioTestAccount } from '../../server/test/twilio-peer.js';

export interface TwilioSinkStats {
  /** Messages accepted since the one asked from. */
  count: number;
  /** Senders they came from. */
  senders: number;
  /** The most messages any sliding second holds, by sender. */
  maxPerSecond: number;
  /** The fewest milliseconds between two messages of one sender. */
  minGapMs: number;
  /** Messages that made their sender's last second hold more than `overRate` (when asked with it). */
  overRate: number;
  /** Requests refused before a message was made (bad auth, bad fields). */
  refusals: number;
}

const account = JSON.parse(process.env.TWILIO_SINK_ACCOUNT ?? '') as TwilioTestAccount;
const peer = await startTwilioPeer([account]);
const senderIds = new Map<string, number>();
const senderOf: number[] = [];
const arrivals: number[] = [];

// The peer's messages moved out as they come.
const compact = () => {
  for (const message of peer.messages) {
    const from = message.from ?? '';
    if (!senderIds.has(from)) senderIds.set(from, senderIds.size);
    senderOf.push(senderIds.get(from)!);
    arrivals.push(message.at);
  }
  peer.messages.length = 0;
};
const compacting = setInterval(compact, 50);

function stats(from: number, rate = Infinity): TwilioSinkStats {
  compact();
  const bySender = new Map<number, number[]>();
  for (let i = from; i < arrivals.length; i++) {
    const times = bySender.get(senderOf[i]!) ?? [];
    times.push(arrivals[i]!);
    bySender.set(senderOf[i]!, times);
  }
  let maxPerSecond = 0;
  let minGapMs = Infinity;
  let overRate = 0;
  for (const times of bySender.values()) {
    times.sort((a, b) => a - b);
    for (let i = 0, j = 0; i < times.length; i++) {
      while (times[i]! - times[j]! >= 1000) j++;
      maxPerSecond = Math.max(maxPerSecond, i - j + 1);
      if (i - j + 1 > rate) overRate++;
      if (i > 0) minGapMs = Math.min(minGapMs, times[i]! - times[i - 1]!);
    }
  }
  return { count: arrivals.length - from, senders: bySender.size, maxPerSecond, minGapMs, overRate, refusals: peer.refusals.length };
}

process.on('message', (message: { stats: number; rate?: number } | 'count') => {
  if (message === 'count') compact();
  process.send!(message === 'count' ? { count: arrivals.length } : stats(message.stats, message.rate));
});
process.on('disconnect', () => {
  clearInterval(compacting);
  void peer.close();
});
process.send!({ url: peer.url });
