// The sandbox provider behind test keys: every message is accepted and recorded (its delivery row), none leaves.
import type { ChannelProvider, SendOutcome } from '../channel.js';

export function createSandboxProvider<Item>(): ChannelProvider<Item> {
  return {
    name: 'sandbox',
    send: async (items) => items.map((): SendOutcome => ({ ok: true, providerCode: 'sandbox' })),
    close: async () => {},
  };
}
