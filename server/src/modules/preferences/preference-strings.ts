// Every word the preference center shows a person, per language: add a language by adding its table here.
import type { Channel } from '../../db/schema.js';

/** Plain text (pages escape it); functions take the values they show. */
export interface PreferenceStrings {
  /** The BCP 47 tag of the page (`<html lang>`). */
  lang: string;
  title: string;
  intro: (address: string, sender: string) => string;
  channelNames: Record<Channel, string>;
  emailSubscribed: string;
  unsubscribeAll: string;
  emailUnsubscribed: string;
  resubscribe: string;
  emailStopped: string;
  otherChannels: string;
  on: string;
  off: string;
  turnOn: string;
  turnOff: string;
  doneTitle: string;
  unsubscribed: (sender: string) => string;
  resubscribed: (sender: string) => string;
  channelTurnedOn: (channel: string) => string;
  channelTurnedOff: (channel: string) => string;
  backToPreferences: string;
  invalidLinkTitle: string;
  invalidLink: string;
  expiredFormTitle: string;
  expiredForm: string;
  refusedTitle: string;
  refused: string;
  badRequestTitle: string;
  badRequest: string;
}

const en: PreferenceStrings = {
  lang: 'en',
  title: 'Email preferences',
  intro: (address, sender) => `For ${address}, who receives email from ${sender}.`,
  channelNames: { email: 'Email', sms: 'Text messages (SMS)', whatsapp: 'WhatsApp', push: 'Push notifications' },
  emailSubscribed: 'You receive email at this address.',
  unsubscribeAll: 'Unsubscribe from all email',
  emailUnsubscribed: 'You are unsubscribed: no email is sent to this address.',
  resubscribe: 'Subscribe to email again',
  emailStopped: 'Email to this address has been stopped, and cannot be turned back on from this page.',
  otherChannels: 'Other ways to reach you',
  on: 'On',
  off: 'Off',
  turnOn: 'Turn on',
  turnOff: 'Turn off',
  doneTitle: 'Your choice is saved',
  unsubscribed: (sender) => `You are unsubscribed: ${sender} will send no more email to this address.`,
  resubscribed: (sender) => `You are subscribed again: ${sender} may send email to this address.`,
  channelTurnedOn: (channel) => `${channel}: turned on.`,
  channelTurnedOff: (channel) => `${channel}: turned off.`,
  backToPreferences: 'Back to your preferences',
  invalidLinkTitle: 'This link is not valid',
  invalidLink: 'It may have been changed or copied incompletely. Please use the link exactly as it came in the email.',
  expiredFormTitle: 'Please try again',
  expiredForm:
    'Nothing was changed: this form has expired or did not come from your preferences page. Open your preferences again and make your choice there.',
  refusedTitle: 'Email cannot be turned on here',
  refused: 'Email to this address was stopped for a reason this page cannot undo. Nothing was changed.',
  badRequestTitle: 'Nothing was changed',
  badRequest: 'This request did not say what to change. Please use your preferences page.',
};

const LANGUAGES: Record<string, PreferenceStrings> = { en };

/** The strings of a person's language (BCP 47: its primary subtag decides), else English. */
export function preferenceStrings(language: string | null | undefined): PreferenceStrings {
  const primary = language?.split('-')[0]?.toLowerCase();
  return (primary && LANGUAGES[primary]) || en;
}
