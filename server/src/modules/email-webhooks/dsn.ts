// Delivery status notifications (RFC 3464) read into email feedback: which recipients failed, for good or for now.
import type { ParsedMail } from 'mailparser';
import type { EmailFeedback } from './email-feedback.js';
import { headerFields, reportParts } from './mime-report.js';

/**
 * The feedback a DSN gives, one per failed or delayed recipient: `Action: failed` with a `5.x.x` status is a hard
 * bounce (`bounced`); `failed` with `4.x.x`, and `delayed`, are soft (`soft_bounced`). `delivered`, `relayed` and
 * `expanded` recipients give none. Undefined when the message is not a DSN.
 */
export function dsnFeedback(mail: ParsedMail, raw: Buffer, receivedAt: Date): EmailFeedback[] | undefined {
  const report = reportParts(mail, raw)?.find((part) => part.type === 'message/delivery-status')?.body;
  if (report === undefined) return undefined;
  const [, ...recipients] = report.trim().split(/\r?\n\s*\r?\n/);
  return recipients.flatMap((block): EmailFeedback[] => {
    const f = headerFields(block);
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
