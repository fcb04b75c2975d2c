import { describe, expect, it } from 'vitest';
import { localTestStrategies } from '../../src/build/test-phase.js';

describe('localTestStrategies (--test_output=streamed)', () => {
  it('keeps the test actions off remote execution, keeping the local strategies the flags list', () => {
    expect(localTestStrategies({}).strategyByMnemonic).toEqual({ TestRunner: ['sandboxed', 'local'] });
    expect(localTestStrategies({ spawnStrategy: ['remote', 'local'] }).strategyByMnemonic).toEqual({ TestRunner: ['local'] });
    expect(localTestStrategies({ spawnStrategy: ['dynamic'] }).strategyByMnemonic).toEqual({ TestRunner: ['sandboxed', 'local'] });
    const byMnemonic = localTestStrategies({ spawnStrategy: ['sandboxed'], strategyByMnemonic: { TestRunner: ['remote', 'local'], Genrule: ['remote'] } });
    expect(byMnemonic).toEqual({ spawnStrategy: ['sandboxed'], strategyByMnemonic: { TestRunner: ['local'], Genrule: ['remote'] } });
  });
});
