// What Herald's service worker receives for a push (sdk/src/sw/herald-sw.ts), and whether content fits in a web push.
import type { PushContent } from '../../../db/schema.js';
import type { PushPayload } from '../../channel.js';
import { MAX_PLAINTEXT_BYTES } from './push-encryption.js';

/** The payload of one delivery: its content, and `track`, the delivery's tracking base URL. */
export function pushPayload(content: PushContent, track: string): PushPayload {
  return {
    title: content.title,
    body: content.body,
    icon: content.iconUrl,
    image: content.imageUrl,
    badge: content.badge,
    url: content.url,
    actions: content.actions,
    track,
  };
}

/** Why `content` cannot go as a web push (its payload, with a tracking URL as long as any, over 4 KB encrypted). */
export function oversizedPush(content: PushContent, longestTrack: string): string | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(pushPayload(content, longestTrack)));
  return bytes > MAX_PLAINTEXT_BYTES ? `the push would be ${bytes} bytes; at most ${MAX_PLAINTEXT_BYTES} fit in a web push` : undefined;
}
