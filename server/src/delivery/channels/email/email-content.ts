// Whether content can go as an email: a subject, a body, mailboxes that are addresses, sizes a receiver takes.
import { z } from 'zod';
import type { EmailContent, EmailMailbox } from '../../../db/schema.js';
import type { ContentProblem } from '../../channel.js';

/** Per body part. Gmail clips HTML past ~100 KB; providers refuse whole messages past 10 MB (SES, most MTAs). */
export const MAX_EMAIL_BODY_BYTES = 512 * 1024;
/** RFC 5322's line limit: a longer subject is folded by some MTAs and cut by others. */
const MAX_SUBJECT_LENGTH = 998;
const MAX_LINE_LENGTH = 255;

const address = z.email();
const lineBreak = /[\r\n]/;

function mailboxProblems(field: string, mailbox: EmailMailbox | undefined, required: boolean): ContentProblem[] {
  if (mailbox === undefined) return required ? [{ field, error: 'is required' }] : [];
  const problems: ContentProblem[] = [];
  if (typeof mailbox.email !== 'string' || !address.safeParse(mailbox.email).success) problems.push({ field: `${field}.email`, error: 'must be an email address' });
  if (mailbox.name !== undefined && (lineBreak.test(mailbox.name) || mailbox.name.length > MAX_LINE_LENGTH)) {
    problems.push({ field: `${field}.name`, error: `must be one line of at most ${MAX_LINE_LENGTH} characters` });
  }
  return problems;
}

/** What keeps `content` from going as an email, or undefined. */
export function emailContentProblems(content: EmailContent): ContentProblem[] | undefined {
  const problems: ContentProblem[] = [];
  const subject = typeof content.subject === 'string' ? content.subject.trim() : '';
  if (subject === '') problems.push({ field: 'subject', error: 'is required' });
  else if (lineBreak.test(subject) || subject.length > MAX_SUBJECT_LENGTH) {
    problems.push({ field: 'subject', error: `must be one line of at most ${MAX_SUBJECT_LENGTH} characters` });
  }
  if (!content.html?.trim() && !content.text?.trim()) problems.push({ error: 'an html or a text body is required' });
  for (const part of ['html', 'text'] as const) {
    const bytes = Buffer.byteLength(content[part] ?? '');
    if (bytes > MAX_EMAIL_BODY_BYTES) problems.push({ field: part, error: `is ${bytes} bytes; at most ${MAX_EMAIL_BODY_BYTES} are sent` });
  }
  if ((content.preheader?.length ?? 0) > MAX_LINE_LENGTH) problems.push({ field: 'preheader', error: `must be at most ${MAX_LINE_LENGTH} characters` });
  problems.push(...mailboxProblems('from', content.from, true), ...mailboxProblems('replyTo', content.replyTo, false));
  return problems.length > 0 ? problems : undefined;
}
