// The words of an invitation's email: plain, with the names escaped in the HTML (and no merge tags read anywhere).
import type { AccountMessage } from '../account-mail/index.js';
import type { Role } from '../tenancy.js';

const escapeHtml = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** A name on one line: a line break in it would start a new line of the subject. */
const oneLine = (value: string) => value.replace(/\s+/g, ' ').trim();

const DATE = new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' });

export function invitationEmail(input: {
  to: string;
  inviter: string;
  organization: string;
  role: Role;
  acceptUrl: string;
  expiresAt: Date;
}): AccountMessage {
  const inviter = oneLine(input.inviter);
  const organization = oneLine(input.organization);
  const expires = `${DATE.format(input.expiresAt)} UTC`;
  const role = `${/^[aeiou]/.test(input.role.toLowerCase()) ? 'an' : 'a'} ${input.role.toLowerCase()}`;
  const text =
    `${inviter} invited you to join ${organization} on Herald as ${role}.\n\n` +
    `Accept the invitation: ${input.acceptUrl}\n\n` +
    `The link works once and expires on ${expires}. If you did not expect this invitation, you can ignore this email.\n`;
  const link = escapeHtml(input.acceptUrl);
  const html =
    '<!doctype html><html><body style="font-family:sans-serif;line-height:1.5;color:#111827">' +
    `<p>${escapeHtml(inviter)} invited you to join <strong>${escapeHtml(organization)}</strong> on Herald as ${role}.</p>` +
    `<p><a href="${link}">Accept the invitation</a></p>` +
    `<p>Or copy this link into your browser: ${link}</p>` +
    `<p style="color:#4b5563">The link works once and expires on ${expires}. If you did not expect this invitation, you can ignore this email.</p>` +
    '</body></html>';
  return { to: input.to, subject: `${inviter} invited you to ${organization} on Herald`, text, html };
}
