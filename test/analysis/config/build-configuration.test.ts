import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/core/index.js';
import { flattenPlatform, hostConstraintValues, hostCpuName, HOST_PLATFORM_LABEL } from '../../../src/analysis/config/platform.js';
import { ARM64, configs, GLIBC, LINUX, LINUX_X64, OSX, PLATFORMS, X86_64 } from './config-fixture.js';

describe('configurations', () => {
  it('target configuration: <cpu>-<compilation_mode>, cpu defaulting to the host CPU', () => {
    const { target } = configs([]);
    expect(target.cpu).toBe('k8');
    expect(target.mnemonic).toBe('k8-fastbuild');
    expect(target.outputDirectories).toEqual({
      root: 'bazel-out/k8-fastbuild',
      bin: 'bazel-out/k8-fastbuild/bin',
      genfiles: 'bazel-out/k8-fastbuild/bin',
      testlogs: 'bazel-out/k8-fastbuild/testlogs',
    });
    expect(configs(['--cpu=arm', '-c', 'dbg']).target.mnemonic).toBe('arm-dbg');
  });

  it('genfiles is its own directory with --noincompatible_merge_genfiles_directory', () => {
    expect(configs(['--noincompatible_merge_genfiles_directory']).target.outputDirectories.genfiles).toBe('bazel-out/k8-fastbuild/genfiles');
  });

  it('exec configuration: cpu from host_cpu, opt, host_copt, its own directory', () => {
    const { target, exec } = configs(['--cpu=arm', '--host_cpu=k8', '--copt=-t', '--host_copt=-h', '--define=a=1', '--features=f', '--stamp']);
    expect(exec.cpu).toBe('k8');
    expect(exec.compilationMode).toBe('opt');
    expect(exec.options.getList('copt')).toEqual(['-h']);
    expect(exec.options.getList('features')).toEqual([]);
    expect(exec.options.getBool('stamp')).toBe(false);
    expect(exec.options.defines().get('a')).toBe('1');
    expect(exec.mnemonic).toBe('k8-opt-exec');
    expect(exec.isExec).toBe(true);
    expect(exec.outputDirectories.bin).not.toBe(target.outputDirectories.bin);
  });

  it('exec stays distinct from a target configuration that is also opt on the host cpu', () => {
    const { target, exec } = configs(['-c', 'opt']);
    expect(target.mnemonic).toBe('k8-opt');
    expect(exec.mnemonic).toBe('k8-opt-exec');
    expect(target.id).not.toBe(exec.id);
  });

  it('ids are stable: equal options (however written) give equal ids; different options differ', () => {
    expect(configs(['-c', 'opt', '--copt=x']).target.id).toBe(configs(['--copt=x', '--compilation_mode=opt']).target.id);
    expect(configs(['--compilation_mode=fastbuild']).target.id).toBe(configs([]).target.id);
    expect(configs(['--copt=x']).target.id).not.toBe(configs([]).target.id);
    expect(configs(['--//f:x=1']).target.id).not.toBe(configs([]).target.id);
    expect(configs([]).target.id).toMatch(/^[0-9a-f]{64}$/);
  });

  it('--platforms sets the target platform; the exec platform stays the host', () => {
    const { target, exec } = configs(['--platforms=//p:linux_arm']);
    expect(target.platform.label).toBe('//p:linux_arm');
    expect(target.platform.has(ARM64)).toBe(true);
    expect(exec.platform.label).toBe(HOST_PLATFORM_LABEL);
    expect(exec.platform.has(X86_64)).toBe(true);
  });

  it('an unknown --platforms label is a usage error', () => {
    expect(() => configs(['--platforms=//p:nope'])).toThrow(UsageError);
    expect(() => configs(['--platforms=//p:nope'])).toThrow("--platforms: '//p:nope' is not a platform");
  });
});

describe('platforms', () => {
  const lookup = (l: string) => PLATFORMS.find((p) => p.label === l);

  it('the default host platform carries the detected os and cpu', () => {
    expect(hostConstraintValues(LINUX_X64)).toEqual([LINUX, X86_64]);
    expect(hostConstraintValues({ platform: 'darwin', arch: 'arm64' }).map((c) => c.label)).toEqual(['@platforms//os:osx', '@platforms//cpu:aarch64']);
    expect(configs([]).target.platform.constraints).toEqual(
      new Map([
        ['@platforms//os:os', '@platforms//os:linux'],
        ['@platforms//cpu:cpu', '@platforms//cpu:x86_64'],
      ]),
    );
    expect(hostCpuName(LINUX_X64)).toBe('k8');
    expect(hostCpuName({ platform: 'linux', arch: 'arm64' })).toBe('aarch64');
  });

  it('a child inherits its parent and overrides constraints of the same setting', () => {
    const mac = flattenPlatform('//p:mac_arm', lookup);
    expect(mac.has(OSX)).toBe(true);
    expect(mac.has(LINUX)).toBe(false);
    expect(mac.has(ARM64)).toBe(true);
    const glibc = flattenPlatform('//p:linux_arm_glibc', lookup);
    expect([...glibc.constraints.values()].sort()).toEqual([GLIBC.label, LINUX.label, ARM64.label].sort());
  });

  it("merges exec_properties down the parents, a child's value of a name winning", () => {
    const decls = [
      {
        label: '//e:base',
        constraintValues: [],
        parents: [],
        execProperties: [
          ['OSFamily', 'linux'],
          ['Pool', 'default'],
        ] as [string, string][],
      },
      { label: '//e:gpu', constraintValues: [], parents: ['//e:base'], execProperties: [['Pool', 'gpu']] as [string, string][] },
    ];
    const gpu = flattenPlatform('//e:gpu', (l) => decls.find((d) => d.label === l));
    expect([...gpu.execProperties]).toEqual([
      ['OSFamily', 'linux'],
      ['Pool', 'gpu'],
    ]);
  });

  it('rejects two parents, cycles, missing parents and duplicate settings', () => {
    const decls = [
      { label: '//q:two', constraintValues: [], parents: ['//q:a', '//q:b'] },
      { label: '//q:a', constraintValues: [], parents: ['//q:b'] },
      { label: '//q:b', constraintValues: [], parents: ['//q:a'] },
      { label: '//q:orphan', constraintValues: [], parents: ['//q:none'] },
      { label: '//q:dup', constraintValues: [LINUX, OSX], parents: [] },
    ];
    const find = (l: string) => decls.find((d) => d.label === l);
    expect(() => flattenPlatform('//q:two', find)).toThrow('parents attribute must have a single value');
    expect(() => flattenPlatform('//q:a', find)).toThrow('cycle in the parents of platform //q:a');
    expect(() => flattenPlatform('//q:orphan', find)).toThrow("in parents attribute of platform rule //q:orphan: '//q:none' is not a platform");
    expect(() => flattenPlatform('//q:dup', find)).toThrow(
      'Duplicate constraint values detected: constraint_setting @platforms//os:os has [@platforms//os:linux, @platforms//os:osx]',
    );
  });
});
