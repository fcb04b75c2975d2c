import { Builtin, None, StarDict, StarModule, unpackArgs, type Kwargs, type Value } from '../starlark/index.js';
import { BuiltinProvider, ProviderInstance, RUN_ENVIRONMENT_INFO, wantType } from './provider.js';
import { unsupported } from './unsupported.js';

/**
 * `testing.ExecutionInfo(requirements = {}, exec_group = "test")`: execution requirements of a test
 * action (`requires-network`, `local`...), returned by a test rule.
 */
export const EXECUTION_INFO = new (class extends BuiltinProvider {
  override instantiate(args: Value[], kwargs: Kwargs | null): ProviderInstance {
    const [requirements, execGroup] = unpackArgs('ExecutionInfo', args, kwargs, ['requirements?', 'exec_group?']);
    const req = requirements === undefined || requirements === None ? new StarDict() : requirements;
    const ok = req instanceof StarDict && [...req.iterate()].every((k) => typeof k === 'string' && typeof req.get(k) === 'string');
    wantType('ExecutionInfo', 'requirements', req, ok, 'dict of strings');
    const group = execGroup === undefined || execGroup === None ? 'test' : execGroup;
    wantType('ExecutionInfo', 'exec_group', group, typeof group === 'string', 'string');
    return new ProviderInstance(this, [
      ['requirements', req],
      ['exec_group', group],
    ]);
  }
})('ExecutionInfo', ['requirements', 'exec_group']);

/** `testing.TestEnvironment(environment, inherited_environment = [])`: deprecated; a RunEnvironmentInfo, as present-day Bazel returns. */
const testEnvironment = new Builtin('TestEnvironment', (_t, args, kwargs) => {
  const [environment, inherited] = unpackArgs('TestEnvironment', args, kwargs, ['environment', 'inherited_environment?']);
  return RUN_ENVIRONMENT_INFO.instantiate(
    [],
    [
      ['environment', environment!],
      ['inherited_environment', inherited ?? None],
    ],
  );
});

/** The `testing` module. `analysis_test` belongs to analysis testing, which Kiln does not run yet. */
export const testingModule = new StarModule(
  'testing',
  new Map<string, Value>([
    ['ExecutionInfo', EXECUTION_INFO],
    ['TestEnvironment', testEnvironment],
    ['analysis_test', unsupported('testing.analysis_test', 'function')],
  ]),
);
