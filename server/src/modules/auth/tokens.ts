// Dashboard access tokens: HS256 JWTs signed with jose, the algorithm pinned and the lifetime bounded on verification.
import { jwtVerify, SignJWT } from 'jose';

const ISSUER = 'herald';

export interface TokenService {
  issue(userId: string): Promise<string>;
  /** The user id of a valid token, or undefined for any expired, tampered, malformed or foreign token. */
  verify(token: string): Promise<string | undefined>;
}

/** How far in the future a token's `iat` may be: the clocks of the instances that sign and verify may differ. */
const CLOCK_TOLERANCE_SECONDS = 60;

/**
 * Tokens expire: `exp` and `iat` are required, a lifetime (`exp - iat`) longer than the configured one is refused
 * (so lowering JWT_TTL shortens tokens already issued), and so is an `iat` in the future.
 */
export function createTokenService(secret: string, ttlSeconds: number): TokenService {
  const key = new TextEncoder().encode(secret);
  return {
    issue(userId) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({})
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(userId)
        .setIssuer(ISSUER)
        .setIssuedAt(now)
        .setExpirationTime(now + ttlSeconds)
        .sign(key);
    },
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], issuer: ISSUER, requiredClaims: ['exp', 'iat', 'sub'] });
        const { exp, iat, sub } = payload as { exp: number; iat: number; sub: unknown };
        if (exp - iat > ttlSeconds || iat > Date.now() / 1000 + CLOCK_TOLERANCE_SECONDS) return undefined;
        return typeof sub === 'string' ? sub : undefined;
      } catch {
        return undefined;
      }
    },
  };
}
