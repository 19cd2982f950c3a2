// The attributes object a write merges into a person (PATCH, the SDK's update, contacts, bulk set): names, size cap.
import { z } from 'zod';

/** Serialized size cap of a subscriber's attributes (after a merge), in bytes of JSON. */
export const ATTRIBUTES_MAX_BYTES = 16 * 1024;

/** The size of a value as JSON; Infinity for one nested too deep to write, which no cap admits. */
export function jsonBytes(value: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(value), 'utf8');
  } catch (error) {
    if (error instanceof RangeError) return Infinity;
    throw error;
  }
}

export const attributes = z
  .record(z.string().min(1).max(100), z.unknown())
  .refine((value) => jsonBytes(value) <= ATTRIBUTES_MAX_BYTES, `must be at most ${ATTRIBUTES_MAX_BYTES} bytes of JSON`)
  .describe(
    'Free JSON object (merge tags). Merged key by key into the stored attributes; a null value removes the key. ' +
      `The stored result is capped at ${ATTRIBUTES_MAX_BYTES} bytes of JSON.`,
  );
