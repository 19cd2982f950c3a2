// SMS segment counting: GSM-7 and its extension characters, UCS-2 and characters outside the BMP, part boundaries.
import { describe, expect, it } from 'vitest';
import { smsContentProblems } from './sms-adapter.js';
import { countSegments } from './sms-segments.js';

describe('countSegments', () => {
  it('fits 160 GSM-7 characters in one part and splits beyond at 153 per part', () => {
    expect(countSegments('a'.repeat(160))).toEqual({ encoding: 'GSM-7', units: 160, segments: 1 });
    expect(countSegments('a'.repeat(161))).toEqual({ encoding: 'GSM-7', units: 161, segments: 2 });
    expect(countSegments('a'.repeat(306))).toEqual({ encoding: 'GSM-7', units: 306, segments: 2 });
    expect(countSegments('a'.repeat(307))).toEqual({ encoding: 'GSM-7', units: 307, segments: 3 });
  });

  it('counts the extension characters as two septets, never split across parts', () => {
    expect(countSegments('€^{}\\[~]|')).toEqual({ encoding: 'GSM-7', units: 18, segments: 1 });
    expect(countSegments('a'.repeat(158) + '€')).toEqual({ encoding: 'GSM-7', units: 160, segments: 1 });
    expect(countSegments('a'.repeat(159) + '€')).toEqual({ encoding: 'GSM-7', units: 161, segments: 2 });
    // 152 septets, then an escape pair that does not fit the part's last septet: it opens the second part.
    expect(countSegments('a'.repeat(152) + '€' + 'a'.repeat(152))).toEqual({ encoding: 'GSM-7', units: 306, segments: 3 });
    expect(countSegments('Prix: 5 € ! Ça coûte?')).toMatchObject({ encoding: 'UCS-2' });
    expect(countSegments('Ça va? Très bien, dit Ærø')).toMatchObject({ encoding: 'GSM-7', units: 25 });
  });

  it('switches the whole text to UCS-2 for one character outside GSM-7: 70 single, 67 per part', () => {
    expect(countSegments('ą'.repeat(70))).toEqual({ encoding: 'UCS-2', units: 70, segments: 1 });
    expect(countSegments('a'.repeat(70) + 'ą')).toEqual({ encoding: 'UCS-2', units: 71, segments: 2 });
    expect(countSegments('д'.repeat(134))).toEqual({ encoding: 'UCS-2', units: 134, segments: 2 });
    expect(countSegments('д'.repeat(135))).toEqual({ encoding: 'UCS-2', units: 135, segments: 3 });
  });

  it('counts a character outside the BMP (an emoji) as two UCS-2 units, never split', () => {
    expect(countSegments('Hi 👋')).toEqual({ encoding: 'UCS-2', units: 5, segments: 1 });
    expect(countSegments('👋'.repeat(35))).toEqual({ encoding: 'UCS-2', units: 70, segments: 1 });
    expect(countSegments('👋'.repeat(36))).toEqual({ encoding: 'UCS-2', units: 72, segments: 2 });
    // 66 units, then a pair that does not fit the part's last unit.
    expect(countSegments('a'.repeat(66) + '👋' + 'a'.repeat(66))).toEqual({ encoding: 'UCS-2', units: 134, segments: 3 });
  });

  it('refuses a text over ten parts', () => {
    expect(smsContentProblems({ body: 'a'.repeat(1530) })).toBeUndefined();
    expect(smsContentProblems({ body: 'a'.repeat(1531) })).toEqual([{ field: 'body', error: 'takes 11 SMS parts (GSM-7); at most 10' }]);
    // 33 emoji per part: a pair is never split, so each part ends one unit short.
    expect(smsContentProblems({ body: '👋'.repeat(330) })).toBeUndefined();
    expect(smsContentProblems({ body: '👋'.repeat(331) })?.[0]?.error).toBe('takes 11 SMS parts (UCS-2); at most 10');
  });
});
