// A certificate authority of the test's own (openssl), and a server certificate it signs: what Herald must be told to trust.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificates {
  /** The CA's certificate as a file: EMAIL_SMTP_CA_FILE or NODE_EXTRA_CA_CERTS names it. */
  caFile: string;
  /** The server's key and certificate (PEM), valid for `names`. */
  key: string;
  cert: string;
  remove(): void;
}

/** A CA and a server certificate for `names` (`IP:127.0.0.1`, `DNS:smtp.example.com` …), valid a day. */
export function makeTestCertificates(...names: string[]): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'herald-ca-'));
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=Herald test CA');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'tls.key', '-out', 'tls.csr', '-subj', '/CN=herald-test-server');
  writeFileSync(join(dir, 'san.cnf'), `subjectAltName=${names.join(',')}\n`);
  openssl('x509', '-req', '-in', 'tls.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'tls.pem', '-days', '1', '-extfile', 'san.cnf');
  const read = (name: string) => readFileSync(join(dir, name), 'utf8');
  return { caFile: join(dir, 'ca.pem'), key: read('tls.key'), cert: read('tls.pem'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
