// Where an alphanumeric sender id may be shown: a per-country rule kept as data, read when senders are provisioned and chosen.

/**
 * Destination countries (ISO 3166-1 alpha-2) whose carriers do not deliver messages from an alphanumeric sender id,
 * after Twilio's "International support for Alphanumeric Sender ID": a `senderId` is ignored there in favour of a
 * number provisioned for the country. Everywhere else an alphanumeric sender may be used once provisioned (some
 * countries also need it pre-registered with the carriers: that is the project's to do before provisioning it).
 */
export const NO_ALPHANUMERIC_SENDER = new Set([
  'US', 'CA', 'PR', 'VI', 'GU', 'AS', 'MP', 'UM',
  'AR', 'BR', 'CL', 'CO', 'CR', 'EC', 'MX', 'PA', 'PE', 'SV', 'UY', 'VE',
  'CN', 'KR', 'VN',
]);

export const allowsAlphanumericSender = (country: string): boolean => !NO_ALPHANUMERIC_SENDER.has(country);

/** 1–11 letters, digits or spaces, at least one letter (a sender id of digits alone would read as a number). */
export const ALPHANUMERIC_SENDER = /^(?=.*[A-Za-z])[A-Za-z0-9 ]{1,11}$/;

/**
 * Destinations whose numbers are another country's for sender choice: Guernsey, Jersey and the Isle of Man share the
 * United Kingdom's +44 numbering and its carriers, so a sender provisioned for GB sends there too (one provisioned
 * for the destination itself comes first).
 */
const SENDER_COUNTRY: Record<string, string> = { GG: 'GB', JE: 'GB', IM: 'GB' };

/** The countries whose senders may send to `country`, in order: its own, then the one it shares numbering with. */
export const senderCountries = (country: string): string[] => (SENDER_COUNTRY[country] ? [country, SENDER_COUNTRY[country]] : [country]);
