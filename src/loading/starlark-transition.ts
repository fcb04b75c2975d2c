import type { Position } from '../core/index.js';
import { Builtin, None, StarCallable, StarDict, StarObject, StarlarkError, typeName, unpackArgs, type Thread, type Value } from '../starlark/index.js';
import { stringSequence } from './bzl-params.js';

/**
 * A configuration transition made in Starlark: `transition(implementation, inputs, outputs)`,
 * `exec_transition(...)` or `analysis_test_transition(settings)`. Loading keeps what it was made
 * of, so `rule(cfg = t)` and `attr.label(cfg = t)` load; applying it is analysis's work.
 */
export class StarlarkTransition extends StarObject {
  constructor(
    readonly kind: 'transition' | 'exec_transition' | 'analysis_test_transition',
    readonly implementation: StarCallable | undefined,
    readonly inputs: readonly string[],
    readonly outputs: readonly string[],
    /** `analysis_test_transition`'s settings: build setting label to its value after the transition. */
    readonly settings: readonly (readonly [string, Value])[],
    /** Where `transition(...)` was called: Bazel reports a transition's validation errors there. */
    readonly location?: Position,
  ) {
    super();
  }
  get type(): string {
    return 'transition';
  }
  repr(): string {
    return `<${this.kind}>`;
  }
}

function implementationTransition(kind: 'transition' | 'exec_transition'): Builtin {
  return new Builtin(kind, (thread, args, kwargs) => {
    const [implementation, inputs, outputs] = unpackArgs(kind, args, kwargs, ['implementation', 'inputs', 'outputs']);
    if (!(implementation instanceof StarCallable))
      throw new StarlarkError(`${kind}: for parameter implementation: got ${typeName(implementation!)}, want callable`);
    return new StarlarkTransition(
      kind,
      implementation,
      stringSequence(kind, 'inputs', inputs),
      stringSequence(kind, 'outputs', outputs),
      [],
      callPosition(thread),
    );
  });
}

/** `transition(implementation, inputs, outputs)`. */
export const transitionBuiltin = implementationTransition('transition');

/** `exec_transition(implementation, inputs, outputs)`. */
export const execTransitionBuiltin = implementationTransition('exec_transition');

/** `analysis_test_transition(settings)`: settings is a dict of build setting labels to values. */
export const analysisTestTransitionBuiltin = new Builtin('analysis_test_transition', (thread, args, kwargs) => {
  const [settings] = unpackArgs('analysis_test_transition', args, kwargs, ['settings']);
  if (!(settings instanceof StarDict)) throw new StarlarkError(`analysis_test_transition: for parameter settings: got ${typeName(settings!)}, want dict`);
  const entries: [string, Value][] = [];
  for (const k of settings.iterate()) {
    if (typeof k !== 'string') throw new StarlarkError(`analysis_test_transition: for parameter settings: got ${typeName(k)} key, want string`);
    entries.push([k, settings.get(k) ?? None]);
  }
  return new StarlarkTransition(
    'analysis_test_transition',
    undefined,
    [],
    entries.map(([k]) => k),
    entries,
    callPosition(thread),
  );
});

/** The position of the builtin call being made (the caller's `transition(...)` expression). */
function callPosition(thread: Thread): Position | undefined {
  return thread.callSyntax(0)?.pos;
}
