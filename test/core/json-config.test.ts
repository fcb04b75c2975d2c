import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  fieldPath,
  inConfigFile,
  parseConfigText,
  readBoolean,
  readInteger,
  readNonEmptyString,
  readObject,
  readOneOf,
  readPositiveInteger,
} from '../../src/core/index.js';

describe('the JSON config reader', () => {
  it('names the field by its path, through objects and arrays', () => {
    const path = fieldPath(fieldPath(fieldPath('storage', 'blocks'), 2), 'sizeBytes');
    expect(path).toBe('storage.blocks[2].sizeBytes');
    expect(() => readPositiveInteger(0, path)).toThrow(new ConfigError('storage.blocks[2].sizeBytes: expected a positive integer, got 0'));
    expect(fieldPath('', 'port')).toBe('port');
  });

  it('rejects unknown fields, naming them and what is allowed', () => {
    expect(readObject({ a: 1 }, 'x', ['a', 'b'])).toEqual({ a: 1 });
    expect(() => readObject({ a: 1, colour: 2 }, 'x', ['a', 'b'])).toThrow('x.colour: unknown field (allowed: a, b)');
    expect(() => readObject([], 'x')).toThrow('x: expected an object, got []');
  });

  it('checks each kind of value and says what it got', () => {
    expect(() => readInteger(70000, 'port', 0, 65535)).toThrow('port: expected an integer from 0 to 65535, got 70000');
    expect(() => readPositiveInteger(2 ** 53, 'n')).toThrow('n: expected a positive integer, got 9007199254740992');
    expect(() => readPositiveInteger(undefined, 'n')).toThrow('n: expected a positive integer, got nothing');
    expect(() => readNonEmptyString('', 'path')).toThrow('path: expected a non-empty string, got ""');
    expect(() => readBoolean('yes', 'sync')).toThrow('sync: expected true or false, got "yes"');
    expect(readOneOf('ac', 'keyspace', ['cas', 'ac'] as const)).toBe('ac');
    expect(() => readOneOf('xyz', 'keyspace', ['cas', 'ac'])).toThrow('keyspace: expected one of "cas", "ac", got "xyz"');
  });

  it("reports through the caller's fail function when given one", () => {
    const fail = (path: string, problem: string): never => {
      throw new Error(`cfg.json: ${path}: ${problem}`);
    };
    expect(() => readInteger(-1, 'limits.x', 0, 10, fail)).toThrow('cfg.json: limits.x: expected an integer from 0 to 10, got -1');
  });

  it('names the file once, and gives a JSON syntax error its line and column', () => {
    expect(() => inConfigFile('a.json', () => readPositiveInteger(0, 'limits.n'))).toThrow(
      new ConfigError('a.json: limits.n: expected a positive integer, got 0'),
    );
    expect(parseConfigText('{"a": 1}', 'a.json', (v) => v)).toEqual({ a: 1 });
    const at = (text: string) => () => parseConfigText(text, 'a.json', (v) => v);
    // V8 quotes ten characters either side of an unexpected token in a longer text: the column is the token's.
    expect(at('{"instanceNames": ["", "ci"],\n "storage": {"kind": "memory", "maxBytes": [1,]}, "port": 1}')).toThrow(
      /^a\.json:2:47: not valid JSON: Unexpected token '\]'/,
    );
    expect(at('{"a": 1,\n  "b": 2,\n}')).toThrow(/^a\.json:3:1: not valid JSON: /);
    expect(at('')).toThrow(/^a\.json:1:1: not valid JSON: Unexpected end/);
  });
});
