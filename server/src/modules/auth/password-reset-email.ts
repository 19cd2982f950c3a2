// The words of a password reset's email: plain, the link and its expiry.
import type { AccountMessage } from '../account-mail/index.js';

const escapeHtml = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function passwordResetEmail(to: string, resetUrl: string, ttlMinutes: number): AccountMessage {
  const text =
    'Someone (hopefully you) asked to reset the password of your Herald account.\n\n' +
    `Choose a new password: ${resetUrl}\n\n` +
    `The link works once and expires in ${ttlMinutes} minutes. If you did not ask, ignore this email: your password stays as it is.\n`;
  const link = escapeHtml(resetUrl);
  const html =
    '<!doctype html><html><body style="font-family:sans-serif;line-height:1.5;color:#111827">' +
    '<p>Someone (hopefully you) asked to reset the password of your Herald account.</p>' +
    `<p><a href="${link}">Choose a new password</a></p>` +
    `<p>Or copy this link into your browser: ${link}</p>` +
    `<p style="color:#4b5563">The link works once and expires in ${ttlMinutes} minutes. If you did not ask, ignore this email: your password stays as it is.</p>` +
    '</body></html>';
  return { to, subject: 'Reset your Herald password', text, html };
}
