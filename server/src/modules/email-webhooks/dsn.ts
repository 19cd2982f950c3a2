// Delivery status notifications (RFC 3464) read into email feedback: which recipients failed, for good or for now.
import type { ParsedMail } from 'mailparser';
import type { EmailFeedback } from './email-feedback.js';

/** The header-style fields of one block of a `message/delivery-status` part, names lower-cased. */
function fields(block: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) map.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return map;
}

/**
 * The body of a report's `message/delivery-status` part. mailparser folds that part into the text, so the top-level
 * `multipart/report` is split on its own boundary here (RFC 3464 puts the report at the top level).
 */
function deliveryStatus(mail: ParsedMail, raw: Buffer): string | undefined {
  const type = mail.headers.get('content-type') as { value?: string; params?: Record<string, string> } | undefined;
  const boundary = type?.params?.boundary;
  if (type?.value?.toLowerCase() !== 'multipart/report' || !boundary) return undefined;
  for (const part of raw.toString('utf8').split(`--${boundary}`)) {
    const [head, ...body] = part.replace(/^\r?\n/, '').split(/\r?\n\r?\n/);
    if (/^content-type:\s*message\/delivery-status/im.test(head ?? '')) return body.join('\n\n');
  }
  return undefined;
}

/**
 * The feedback a DSN gives, one per failed or delayed recipient: `Action: failed` with a `5.x.x` status is a hard
 * bounce (`bounced`); `failed` with `4.x.x`, and `delayed`, are soft (`soft_bounced`). `delivered`, `relayed` and
 * `expanded` recipients give none. Undefined when the message is not a DSN.
 */
export function dsnFeedback(mail: ParsedMail, raw: Buffer, receivedAt: Date): EmailFeedback[] | undefined {
  const report = deliveryStatus(mail, raw);
  if (report === undefined) return undefined;
  const [, ...recipients] = report.trim().split(/\r?\n\s*\r?\n/);
  return recipients.flatMap((block): EmailFeedback[] => {
    const f = fields(block);
    const action = f.get('action')?.toLowerCase();
    const status = f.get('status') ?? '';
    const recipient = (f.get('final-recipient') ?? f.get('original-recipient') ?? '').replace(/^rfc822;\s*/i, '').toLowerCase();
    if (action !== 'failed' && action !== 'delayed') return [];
    const hard = action === 'failed' && status.startsWith('5');
    return [
      {
        type: hard ? 'bounced' : 'soft_bounced',
        occurredAt: receivedAt,
        recipients: recipient ? [recipient] : [],
        detail: { provider: 'dsn', action, status, diagnosticCode: f.get('diagnostic-code') },
      },
    ];
  });
}
