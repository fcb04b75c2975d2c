import { createPrivateKey, createPublicKey, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { IssuedTokens, newServiceAccount, verifyAssertion } from '../../../scheduler/security/service-account-tokens.js';
import { parseSecurityConfig } from '../../../scheduler/security/security-config.js';
import { throwConfigError } from '../../../src/core/index.js';

const AUDIENCE = 'http://sched:8981/token';
const account = newServiceAccount('ci', 'ci@kiln.test', AUDIENCE);
const privateKey = createPrivateKey(JSON.parse(account.keyFile).private_key);
const accounts = new Map([['ci@kiln.test', { name: 'ci', key: createPublicKey(account.publicKeyPem) }]]);
const other = newServiceAccount('other', 'ci@kiln.test', AUDIENCE);
const otherKey = createPrivateKey(JSON.parse(other.keyFile).private_key);

/** An assertion as Google's credential libraries make it (RS256 over `header.claims`). */
function assertion(claims: Record<string, unknown>, { alg = 'RS256', key = privateKey } = {}): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const signed = `${b64({ alg, typ: 'JWT', kid: 'k1' })}.${b64(claims)}`;
  return `${signed}.${sign('sha256', Buffer.from(signed), key).toString('base64url')}`;
}

const NOW = 1_800_000_000;
const good = { iss: 'ci@kiln.test', aud: AUDIENCE, iat: NOW, exp: NOW + 3600, scope: 'https://www.googleapis.com/auth/cloud-platform' };

describe('service-account assertions (RFC 7523, as --google_credentials sends them)', () => {
  it('takes a well-signed assertion for the endpoint, now, and names its account', () => {
    expect(verifyAssertion(assertion(good), accounts, AUDIENCE, NOW + 10)).toBe('ci');
  });

  it.each([
    ['another key', assertion(good, { key: otherKey }), 'not signed by a known service account'],
    ['an unknown account (same words)', assertion({ ...good, iss: 'who@kiln.test' }), 'not signed by a known service account'],
    ['another audience', assertion({ ...good, aud: 'http://elsewhere/token' }), `audience is not ${AUDIENCE}`],
    ['an expired one', assertion({ ...good, iat: NOW - 7200, exp: NOW - 3600 }), 'not valid now'],
    ['one from the future', assertion({ ...good, iat: NOW + 600, exp: NOW + 1200 }), 'not valid now'],
    ['one valid for a day', assertion({ ...good, exp: NOW + 86_400 }), 'more than an hour'],
    ['no times', assertion({ iss: good.iss, aud: AUDIENCE }), 'no iat and exp'],
    ['alg none', `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(good)).toString('base64url')}.`, 'RS256 only'],
    ['not a JWT', 'abc', 'not a JWT'],
    ['garbage parts', 'a.b.c', 'not a JSON object'],
  ])('refuses %s', (_what, jwt, message) => {
    expect(() => verifyAssertion(jwt, accounts, AUDIENCE, NOW)).toThrow(message);
  });
});

describe('issued access tokens', () => {
  it('name their account until they expire, and are bounded per account', () => {
    let now = 0;
    const issued = new IssuedTokens(() => now);
    const { token, expiresIn } = issued.issue('ci');
    expect(expiresIn).toBe(3600);
    expect(issued.nameOf(token)).toBe('ci');
    expect(issued.nameOf(`${token}x`)).toBeUndefined();
    now = 3600 * 1000;
    expect(issued.nameOf(token)).toBeUndefined();
    now = 0;
    const first = issued.issue('ci').token;
    for (let i = 0; i < 1024; i++) issued.issue('ci');
    expect(issued.nameOf(first)).toBeUndefined(); // the oldest went first
  });
});

describe('auth.serviceAccounts and auth.tokenEndpoint', () => {
  const parse = (auth: unknown) => parseSecurityConfig(undefined, auth, [''], '/etc/kiln', throwConfigError);

  it('reads accounts (public keys relative to the config) and the endpoint', () => {
    const config = parse({ serviceAccounts: { ci: { email: 'ci@kiln.test', publicKey: 'ci.pub.pem' } }, tokenEndpoint: { port: 8981 } });
    expect(config.auth).toMatchObject({
      kind: 'on',
      tokenEndpoint: { host: '127.0.0.1', port: 8981, plaintext: false, accounts: [{ name: 'ci', email: 'ci@kiln.test', publicKey: '/etc/kiln/ci.pub.pem' }] },
    });
  });

  it.each([
    [{ serviceAccounts: { ci: { email: 'a', publicKey: 'p' } } }, 'auth.tokenEndpoint: needed with "auth.serviceAccounts"'],
    [{ tokenEndpoint: {} }, 'auth.serviceAccounts: needed with "auth.tokenEndpoint"'],
    [{ serviceAccounts: {}, tokenEndpoint: {} }, 'auth.serviceAccounts: expected at least one account'],
    [{ serviceAccounts: { ci: { email: 'a' } }, tokenEndpoint: {} }, 'auth.serviceAccounts["ci"].publicKey'],
    [
      { serviceAccounts: { ci: { email: 'a', publicKey: 'p' } }, tokenEndpoint: { url: 'ftp://x' } },
      'auth.tokenEndpoint.url: expected the http:// or https:// URL',
    ],
  ])('refuses %j naming the field', (auth, message) => {
    expect(() => parse(auth)).toThrow(message);
  });
});
