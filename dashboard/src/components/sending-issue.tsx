// A sending campaign's provider failing: what it does in words, since when, and that Herald keeps retrying.
import type { Schemas } from '../api/client';
import { dateTime } from './format';

type SendingIssue = Schemas['SendingIssue'];

const PROVIDER = { email: 'the email provider', push: 'the push service' } as const;

/** The provider's failure in words, its code in brackets (what a support request or a provider's status page names). */
export function issueWords(issue: SendingIssue, channel: keyof typeof PROVIDER): string {
  const provider = PROVIDER[channel];
  const code = issue.providerCode ?? '';
  const detail = issue.detail ?? '';
  const smtp = /^smtp_(\d{3})$/.exec(code);
  const http = /^http_(\d{3})$/.exec(code);
  if (/ECONNREFUSED/i.test(code) || /ECONNREFUSED/.test(detail)) return `${provider} refused the connection (ECONNREFUSED)`;
  if (code === 'edns' || /ENOTFOUND|EAI_AGAIN/.test(detail)) return `${provider}'s host name could not be resolved (${code})`;
  if (code === 'timeout' || code === 'etimedout' || /ETIMEDOUT/.test(detail)) return `${provider} did not answer in time (${code})`;
  if (smtp) return `${provider} answers every message with ${smtp[1]}, a temporary refusal`;
  if (http?.[1] === '429') return `${provider} is rate limiting Herald (HTTP 429)`;
  if (http) return `${provider} answers HTTP ${http[1]}`;
  if (/^ses_(throttling|too_many_requests|limit_exceeded)$/.test(code)) return `${provider} is throttling Herald (${code})`;
  if (code === 'ses_sending_paused') return `sending is paused on the SES account (${code})`;
  if (code === 'dkim_key_unavailable') return `the sending domain's DKIM key could not be read (${code})`;
  if (['esocket', 'econnection', 'econnreset', 'etls', 'socket_closed', 'network_error'].includes(code.toLowerCase())) {
    return `${provider} could not be reached (${code})`;
  }
  return `${provider} fails (${code || issue.reason})`;
}

/** A time of today as its hour and minute; another day's with its date. */
function since(value: string): string {
  const at = new Date(value);
  return at.toDateString() === new Date().toDateString() ? at.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : dateTime(value);
}

export function SendingIssueBanner({ issue, channel }: { issue: SendingIssue | null | undefined; channel: keyof typeof PROVIDER }) {
  if (!issue) return null;
  return (
    <div className="notice sending-issue" data-testid="sending-issue">
      {/* Only the sentence is announced: the time of the latest attempt changes with every retry. */}
      <p role="alert">
        <strong>Sending is held up:</strong> {issueWords(issue, channel)} since {since(issue.since)} — Herald keeps retrying.
      </p>
      <p className="hint">
        Last failure at {dateTime(issue.at)}
        {issue.detail && (
          <>
            : <code>{issue.detail}</code>
          </>
        )}
        . The deliveries wait for their retries, so the counters stop moving until the provider answers again.
      </p>
    </div>
  );
}
