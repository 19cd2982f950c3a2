// Dashboard access tokens: HS256 JWTs signed with jose, the algorithm pinned on verification.
import { jwtVerify, SignJWT } from 'jose';

const ISSUER = 'herald';

export interface TokenService {
  issue(userId: string): Promise<string>;
  /** The user id of a valid token, or undefined for any expired, tampered, malformed or foreign token. */
  verify(token: string): Promise<string | undefined>;
}

export function createTokenService(secret: string, ttlSeconds: number): TokenService {
  const key = new TextEncoder().encode(secret);
  return {
    issue: (userId) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(userId)
        .setIssuer(ISSUER)
        .setIssuedAt()
        .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
        .sign(key),
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], issuer: ISSUER });
        return typeof payload.sub === 'string' ? payload.sub : undefined;
      } catch {
        return undefined;
      }
    },
  };
}
