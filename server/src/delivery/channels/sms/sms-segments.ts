// How many SMS parts a text takes: GSM-7 (160 single, 153 per part; extension characters take two septets) or, with
// any character outside GSM-7, UCS-2 (70 single, 67 per part; characters outside the BMP take two units).

/** The longest SMS Herald sends, in parts: carriers reassemble up to about ten reliably, and Twilio's limit is 1,600 characters. */
export const MAX_SMS_SEGMENTS = 10;

export type SmsEncoding = 'GSM-7' | 'UCS-2';

export interface SmsSegments {
  encoding: SmsEncoding;
  /** Septets (GSM-7) or 16-bit units (UCS-2) the text takes. */
  units: number;
  segments: number;
}

// GSM 03.38's default alphabet (the escape character excluded) and its extension table, each extension character
// sent as escape + character.
const GSM_BASIC = new Set(
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà',
);
const GSM_EXTENSION = new Set('^{}\\[~]|€\f');

const LIMITS: Record<SmsEncoding, { single: number; part: number }> = {
  'GSM-7': { single: 160, part: 153 },
  'UCS-2': { single: 70, part: 67 },
};

/**
 * Counts a text's parts as a handset receives them. A character is never split across two parts (an escape and its
 * extension character, a surrogate pair), so a part may end one unit short.
 */
export function countSegments(text: string): SmsSegments {
  const characters = [...text];
  const gsm = characters.every((c) => GSM_BASIC.has(c) || GSM_EXTENSION.has(c));
  const encoding: SmsEncoding = gsm ? 'GSM-7' : 'UCS-2';
  const widths = characters.map((c) => (gsm ? (GSM_EXTENSION.has(c) ? 2 : 1) : c.length));
  const units = widths.reduce((sum, width) => sum + width, 0);
  const { single, part } = LIMITS[encoding];
  if (units <= single) return { encoding, units, segments: units === 0 ? 0 : 1 };
  let segments = 1;
  let used = 0;
  for (const width of widths) {
    if (used + width > part) {
      segments++;
      used = 0;
    }
    used += width;
  }
  return { encoding, units, segments };
}
