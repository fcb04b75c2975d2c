import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { needTool } from '../../setup/need-tool.js';

/**
 * Whether Debian's openssl is here to issue test certificates (Node's crypto cannot), through
 * needTool: under CI a missing openssl fails, never skips. Call it where the tests are declared.
 */
export function opensslAvailable(): boolean {
  return needTool(
    'openssl',
    spawnSync('openssl', ['version']).status === 0,
    'apt-get install openssl (it makes the test certificates; scripts/test-setup.d/15-openssl.sh does)',
  );
}

export interface CertificateFiles {
  readonly ca: string;
  readonly caKey: string;
  readonly certificate: string;
  readonly key: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A fresh CA (`NAME-ca.pem`, `NAME-ca.key`) in `dir`, valid one day. */
export async function makeCa(dir: string, name: string): Promise<{ ca: string; caKey: string }> {
  await mkdir(dir, { recursive: true });
  openssl(['req', '-x509', ...EC_KEY, '-keyout', `${name}-ca.key`, '-out', `${name}-ca.pem`, '-days', '1', '-subj', `/CN=${name} test CA`], dir);
  return { ca: join(dir, `${name}-ca.pem`), caKey: join(dir, `${name}-ca.key`) };
}

/**
 * A certificate `NAME.pem` / `NAME.key` signed by `ca`: subject CN `cn`, SANs `san` (default: the
 * loopback names a server on 127.0.0.1 needs).
 */
export async function issueCertificate(
  ca: { ca: string; caKey: string },
  dir: string,
  name: string,
  cn: string,
  san = 'IP:127.0.0.1,DNS:localhost',
): Promise<CertificateFiles> {
  await mkdir(dir, { recursive: true });
  const ext = join(dir, `${name}.ext`);
  await writeFile(ext, `subjectAltName=${san}\n`);
  openssl(['req', ...EC_KEY, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`], dir);
  const serial = `0x${randomBytes(8).toString('hex')}`;
  openssl(
    ['x509', '-req', '-in', `${name}.csr`, '-CA', ca.ca, '-CAkey', ca.caKey, '-set_serial', serial, '-out', `${name}.pem`, '-days', '1', '-extfile', ext],
    dir,
  );
  return { ...ca, certificate: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) };
}
