import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { codeStamp } from '../../src/core/index.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('codeStamp', () => {
  it('changes with a file beside the module (a renamed chunk, a new size) even when every mtime is the same', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiln-stamp-'));
    dirs.push(dir);
    const fixed = new Date('1985-10-26T08:15:00Z'); // what npm gives installed files
    const write = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      utimesSync(join(dir, name), fixed, fixed);
    };
    write('kiln.js', 'main');
    write('chunk-AAAA.js', 'one');
    const module = pathToFileURL(join(dir, 'kiln.js')).href;
    const first = codeStamp(module);
    expect(codeStamp(module)).toBe(first);
    rmSync(join(dir, 'chunk-AAAA.js'));
    write('chunk-BBBB.js', 'one');
    const renamed = codeStamp(module);
    expect(renamed).not.toBe(first);
    write('kiln.js', 'main, longer');
    expect(codeStamp(module)).not.toBe(renamed);
  });
});
