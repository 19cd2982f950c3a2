// RFC 8291 encryption: the RFC's own example byte for byte, and round trips through http_ece up to the 4096-byte limit.
import { createECDH, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createFakeBrowser } from '../../../../test/push-service.js';
import { encryptPushPayload, MAX_BODY_BYTES, MAX_PLAINTEXT_BYTES } from './push-encryption.js';

const b64 = (text: string) => Buffer.from(text, 'base64url');

describe('encryptPushPayload', () => {
  it('reproduces the example of RFC 8291 Appendix A', () => {
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(b64('yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw'));
    const body = encryptPushPayload(
      Buffer.from('When I grow up, I want to be a watermelon'),
      b64('BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4'),
      b64('BTBZMqHH6r4Tts7J_aSIgg'),
      { ecdh, salt: b64('DGv6ra1nlYgDCS1FRnbzlw') },
    );
    expect(body.toString('base64url')).toBe(
      'DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN',
    );
  });

  it('allows 3993 plaintext bytes: 86 header + 3993 + 1 delimiter + 16 tag = 4096', () => {
    expect(MAX_PLAINTEXT_BYTES).toBe(3993);
    expect(MAX_BODY_BYTES).toBe(4096);
  });

  it.each([0, 1, 100, 1000, 3000, MAX_PLAINTEXT_BYTES])('round-trips %i bytes through http_ece', (size) => {
    const browser = createFakeBrowser();
    const plaintext = randomBytes(size);
    const body = encryptPushPayload(plaintext, b64(browser.p256dh), b64(browser.auth));
    expect(body.length).toBe(86 + size + 1 + 16);
    expect(browser.decrypt(body).equals(plaintext)).toBe(true);
  });

  it('fills exactly 4096 bytes at the limit and refuses one byte more', () => {
    const browser = createFakeBrowser();
    expect(encryptPushPayload(Buffer.alloc(MAX_PLAINTEXT_BYTES, 'a'), b64(browser.p256dh), b64(browser.auth))).toHaveLength(4096);
    expect(() => encryptPushPayload(Buffer.alloc(MAX_PLAINTEXT_BYTES + 1, 'a'), b64(browser.p256dh), b64(browser.auth))).toThrow(RangeError);
  });

  it('uses a new key pair and salt for every message', () => {
    const browser = createFakeBrowser();
    const plaintext = Buffer.from('{"title":"same"}');
    const [a, b] = [0, 1].map(() => encryptPushPayload(plaintext, b64(browser.p256dh), b64(browser.auth)));
    expect(a!.subarray(0, 16).equals(b!.subarray(0, 16))).toBe(false);
    expect(a!.subarray(21, 86).equals(b!.subarray(21, 86))).toBe(false);
  });

  it('refuses malformed subscription keys', () => {
    const browser = createFakeBrowser();
    expect(() => encryptPushPayload(Buffer.from('x'), b64(browser.p256dh).subarray(0, 33), b64(browser.auth))).toThrow(RangeError);
    expect(() => encryptPushPayload(Buffer.from('x'), b64(browser.p256dh), randomBytes(8))).toThrow(RangeError);
    const offCurve = Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]);
    expect(() => encryptPushPayload(Buffer.from('x'), offCurve, b64(browser.auth))).toThrow();
  });
});
