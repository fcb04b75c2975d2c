import { createRequire } from 'node:module';

type Crypto = typeof import('node:crypto');
let loaded: Crypto | undefined;

/**
 * node:crypto, loaded on first use. Importing it costs about 9 ms of every start-up (fifteen internal
 * modules), which a command that hashes nothing, such as a query answered from the package cache, skips.
 */
export function nodeCrypto(): Crypto {
  return (loaded ??= createRequire(import.meta.url)('node:crypto') as Crypto);
}
