import { describe, expect, it } from 'vitest';
import { expandRunArguments, expandRunValue, ExpansionFailure, tokenize } from '../../../src/analysis/index.js';

const locations = {
  prerequisites: new Map([
    ['//pkg:data.txt', { execPaths: ['pkg/data.txt'], rootPaths: ['pkg/data.txt'] }],
    ['//pkg:gen', { execPaths: ['bazel-out/k8-fastbuild/bin/pkg/a', 'bazel-out/k8-fastbuild/bin/pkg/b'], rootPaths: ['pkg/a', 'pkg/b'] }],
  ]),
  canonicalize: (raw: string) => (raw.startsWith('//') ? raw : `//pkg:${raw.replace(/^:/, '')}`),
};
const variables = (name: string) => ({ COMPILATION_MODE: 'fastbuild' })[name];

describe('args and env of executable and test rules', () => {
  it('$(location) and $(locations) are runfiles paths; $(execpath) stays an exec path; Make variables expand', () => {
    expect(
      expandRunArguments(['$(location data.txt)', '$(locations :gen)', '--mode=$(COMPILATION_MODE)', '$(execpath :data.txt)'], locations, variables),
    ).toEqual(['pkg/data.txt', 'pkg/a', 'pkg/b', '--mode=fastbuild', 'pkg/data.txt']);
    expect(expandRunValue('$(rootpaths :gen)', locations, variables)).toBe('pkg/a pkg/b');
  });

  it('splits each argument into words as a shell would', () => {
    expect(tokenize(`a 'b c' "d \\"e\\"" f\\ g ''`)).toEqual(['a', 'b c', 'd "e"', 'f g', '']);
    expect(() => tokenize(`'open`)).toThrow(ExpansionFailure);
  });

  it('reports an unknown label or variable', () => {
    expect(() => expandRunArguments(['$(location :nope)'], locations, variables)).toThrow(/not a declared prerequisite/);
    expect(() => expandRunArguments(['$(NOPE)'], locations, variables)).toThrow(/\$\(NOPE\) not defined/);
  });
});
