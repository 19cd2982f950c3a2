// What the email adapter's validate accepts and names: a subject, a body, addresses, sizes.
import { describe, expect, it } from 'vitest';
import type { EmailContent } from '../../../db/schema.js';
import { emailContentProblems, MAX_EMAIL_BODY_BYTES } from './email-content.js';

const content = (fields: Partial<EmailContent> = {}): EmailContent => ({
  subject: 'Welcome',
  html: '<p>Hello</p>',
  from: { email: 'news@mail.example.com', name: 'Example' },
  ...fields,
});

describe('email content', () => {
  it('takes a subject with an html or a text body, from an address, with an optional reply-to and preheader', () => {
    expect(emailContentProblems(content())).toBeUndefined();
    expect(emailContentProblems(content({ html: undefined, text: 'Hello' }))).toBeUndefined();
    expect(emailContentProblems(content({ preheader: 'The week in review', replyTo: { email: 'help@example.com' } }))).toBeUndefined();
  });

  it('names each problem by its field', () => {
    expect(emailContentProblems(content({ subject: '  ', html: ' ', text: undefined, from: { email: 'not an address' } }))).toEqual([
      { field: 'subject', error: 'is required' },
      { error: 'an html or a text body is required' },
      { field: 'from.email', error: 'must be an email address' },
    ]);
    expect(emailContentProblems(content({ subject: 'Line\r\nBcc: everyone@example.com' }))).toEqual([
      { field: 'subject', error: 'must be one line of at most 998 characters' },
    ]);
    expect(emailContentProblems(content({ from: { email: 'a@example.com', name: 'A\nB' }, replyTo: { email: 'nope' } }))).toEqual([
      { field: 'from.name', error: 'must be one line of at most 255 characters' },
      { field: 'replyTo.email', error: 'must be an email address' },
    ]);
    expect(emailContentProblems({ subject: 'Hi', html: '<p>Hi</p>' } as EmailContent)).toEqual([{ field: 'from', error: 'is required' }]);
  });

  it('refuses bodies over the size a receiver takes, and preheaders longer than a preview line', () => {
    const html = `<p>${'x'.repeat(MAX_EMAIL_BODY_BYTES)}</p>`;
    expect(emailContentProblems(content({ html, preheader: 'p'.repeat(256) }))).toEqual([
      { field: 'html', error: `is ${MAX_EMAIL_BODY_BYTES + 7} bytes; at most ${MAX_EMAIL_BODY_BYTES} are sent` },
      { field: 'preheader', error: 'must be at most 255 characters' },
    ]);
  });
});
