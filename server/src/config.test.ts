// The configuration module: defaults, durations, and every bad key reported at once.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseDurationSeconds } from './config.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig defaults', () => {
  it('starts on port 3000 with an embedded database under ./data and a 7-day JWT', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.host).toBe('0.0.0.0');
    expect(config.publicUrl).toBe('http://localhost:3000');
    expect(config.databaseUrl).toBeUndefined();
    expect(config.dataDir).toBe('./data');
    expect(config.jwtSecret).toBeUndefined();
    expect(config.jwtTtlSeconds).toBe(604_800);
    expect(config.adminEmail).toBeUndefined();
    expect(config.adminPassword).toBeUndefined();
    expect(config.redisUrl).toBeUndefined();
    expect(config.logLevel).toBe('info');
    expect(config.rateLimit).toEqual({ enabled: true, windowSeconds: 60, default: 600, ingest: 120, transactional: 120 });
  });

  it('serves no metrics unless METRICS_PORT or METRICS_TOKEN says where and to whom', () => {
    expect(loadConfig({}).metrics).toEqual({ token: undefined, port: undefined, host: '127.0.0.1' });
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '10.0.0.5', METRICS_TOKEN: 't'.repeat(32) }).metrics).toEqual({
      token: 't'.repeat(32),
      port: 9464,
      host: '10.0.0.5',
    });
    expect(problemsOf({ METRICS_TOKEN: 'short', METRICS_PORT: '70000' })).toEqual([
      expect.stringMatching(/^METRICS_TOKEN: must be at least 32 characters/),
      expect.stringMatching(/^METRICS_PORT: /),
    ]);
  });

  it('treats empty variables as unset', () => {
    const config = loadConfig({ PORT: '', JWT_SECRET: '', DATABASE_URL: '' });
    expect(config.port).toBe(3000);
    expect(config.jwtSecret).toBeUndefined();
    expect(config.databaseUrl).toBeUndefined();
  });

  it('reads every setting it is given', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      PUBLIC_URL: 'https://herald.example.com/',
      DATABASE_URL: 'postgres://u:p@db:5432/herald',
      DATA_DIR: '/var/lib/herald',
      JWT_SECRET: 'x'.repeat(32),
      JWT_TTL: '12h',
      ADMIN_EMAIL: 'ops@example.com',
      ADMIN_PASSWORD: 'long enough password',
      REDIS_URL: 'redis://cache:6379',
      LOG_LEVEL: 'debug',
      RATE_LIMIT_ENABLED: 'false',
      RATE_LIMIT_WINDOW: '30s',
      RATE_LIMIT_DEFAULT: '1000',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      publicUrl: 'https://herald.example.com',
      databaseUrl: 'postgres://u:p@db:5432/herald',
      dataDir: '/var/lib/herald',
      jwtSecret: 'x'.repeat(32),
      jwtTtlSeconds: 43_200,
      adminEmail: 'ops@example.com',
      adminPassword: 'long enough password',
      redisUrl: 'redis://cache:6379',
      logLevel: 'debug',
      rateLimit: { enabled: false, windowSeconds: 30, default: 1000 },
    });
    expect(loadConfig({ PORT: '4000' }).publicUrl).toBe('http://localhost:4000');
  });
});

describe('sending domains', () => {
  it('asks the system resolvers and advises no SPF include unless told otherwise', () => {
    expect(loadConfig({}).emailDomains).toEqual({ dnsServers: [], spfInclude: undefined });
  });

  it('reads DNS_SERVERS as ip[:port] servers and EMAIL_SPF_INCLUDE as a domain', () => {
    const config = loadConfig({ DNS_SERVERS: ' 10.0.0.2, 127.0.0.1:5353,::1,[2001:db8::1]:53 ', EMAIL_SPF_INCLUDE: '_SPF.Herald.example.com' });
    expect(config.emailDomains).toEqual({
      dnsServers: ['10.0.0.2', '127.0.0.1:5353', '::1', '[2001:db8::1]:53'],
      spfInclude: '_spf.herald.example.com',
    });
  });

  it.each([
    ['DNS_SERVERS', 'dns.example.com'],
    ['DNS_SERVERS', '10.0.0.2:99999'],
    ['DNS_SERVERS', '10.0.0.300'],
    ['DNS_SERVERS', '2001:db8::1:53:x'],
    ['EMAIL_SPF_INCLUDE', 'not a domain'],
    ['EMAIL_SPF_INCLUDE', 'localhost'],
  ])('rejects %s=%s', (key, value) => {
    expect(problemsOf({ [key]: value })).toEqual([expect.stringMatching(new RegExp(`^${key}: `))]);
  });
});

describe('outbound hosts', () => {
  it('allows none unless told, and reads OUTBOUND_ALLOWED_HOSTS as names, addresses and subnets', () => {
    expect(loadConfig({}).outboundAllowedHosts).toEqual({ names: [], subnets: [] });
    expect(loadConfig({ OUTBOUND_ALLOWED_HOSTS: ' Relay.Internal., 127.0.0.1,10.0.0.0/8 , ::1, fd00::/8' }).outboundAllowedHosts).toEqual({
      names: ['relay.internal'],
      subnets: [
        { network: '127.0.0.1', prefix: 32, family: 'ipv4' },
        { network: '10.0.0.0', prefix: 8, family: 'ipv4' },
        { network: '::1', prefix: 128, family: 'ipv6' },
        { network: 'fd00::', prefix: 8, family: 'ipv6' },
      ],
    });
  });

  it.each(['10.0.0.0/33', 'relay.internal/8', 'not a host', '10.0.0.0/8/8', 'http://relay'])('rejects OUTBOUND_ALLOWED_HOSTS=%s', (value) => {
    expect(problemsOf({ OUTBOUND_ALLOWED_HOSTS: value })).toEqual([expect.stringMatching(/^OUTBOUND_ALLOWED_HOSTS: must be comma-separated host names/)]);
  });
});

describe('durations', () => {
  it.each([
    ['900', 900],
    ['15m', 900],
    ['12h', 43_200],
    ['7d', 604_800],
    ['30s', 30],
    ['2500ms', 2],
  ])('parses %s as %i seconds', (text, seconds) => {
    expect(parseDurationSeconds(text)).toBe(seconds);
    expect(loadConfig({ JWT_TTL: text }).jwtTtlSeconds).toBe(seconds);
  });

  it.each(['0', '-5m', '15 minutes', '1.5h', 'forever', '10ms'])('rejects %s', (text) => {
    expect(parseDurationSeconds(text)).toBeUndefined();
    expect(problemsOf({ JWT_TTL: text })).toEqual([expect.stringMatching(/^JWT_TTL: must be a duration/)]);
  });
});

describe('bad configuration', () => {
  it('names every bad key at once', () => {
    const problems = problemsOf({ PORT: 'abc', JWT_SECRET: 'short', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud' });
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(['DATABASE_URL', 'JWT_SECRET', 'LOG_LEVEL', 'PORT']);
    expect(problems.find((p) => p.startsWith('JWT_SECRET'))).toMatch(/at least 32 characters/);
  });

  it.each([
    ['PORT', '70000'],
    ['PORT', '80.5'],
    ['PUBLIC_URL', 'ftp://example.com'],
    ['DATABASE_URL', 'not a url'],
    ['REDIS_URL', 'http://cache:6379'],
    ['ADMIN_EMAIL', 'not-an-email'],
    ['ADMIN_PASSWORD', 'short'],
    ['RATE_LIMIT_ENABLED', 'maybe'],
    ['RATE_LIMIT_DEFAULT', '0'],
    ['DB_POOL_MAX', 'many'],
  ])('rejects %s=%s', (key, value) => {
    const problems = problemsOf({ [key]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${key}: `));
  });

  it('puts every problem in the error message', () => {
    expect(() => loadConfig({ PORT: 'abc', LOG_LEVEL: 'loud' })).toThrow(/Invalid configuration:\n {2}- PORT: .*\n {2}- LOG_LEVEL: /);
  });
});
