// Account mail (an invitation, a password reset) rendered as written: no tracked link, no open pixel, no unsubscribe footer or header.
import { createHash } from 'node:crypto';
import type { EmailMailbox } from '../../../db/schema.js';
import { randomToken } from '../../../shared/secrets.js';
import type { RenderedEmail } from './email-item.js';

/** Herald's own words to one person, already escaped: nothing in it is read as a merge tag. */
export interface AccountEmail {
  from: EmailMailbox;
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * The email as it goes: a random Message-ID on the From domain, the From address as Return-Path (no delivery row
 * stands behind it for a VERP bounce to name), `Auto-Submitted: auto-generated` (RFC 3834: no auto-reply), and a
 * Feedback-ID of its own stream, `<project id>:account:herald`.
 */
export function renderAccountEmail(projectId: string, email: AccountEmail): RenderedEmail {
  const domain = email.from.email.slice(email.from.email.lastIndexOf('@') + 1).toLowerCase();
  const messageId = `<${randomToken(26)}@${domain}>`;
  return {
    messageId,
    from: email.from,
    replyTo: undefined,
    to: email.to,
    subject: email.subject.replace(/\s+/g, ' ').trim(),
    html: email.html,
    text: email.text,
    headers: { 'Auto-Submitted': 'auto-generated', 'Feedback-ID': `${projectId}:account:herald` },
    returnPath: email.from.email,
    baseBoundary: createHash('sha256').update(messageId).digest('hex').slice(0, 16),
  };
}
