import { isKilnError, KilnError } from '../../core/index.js';
import { Label, StarlarkAspect } from '../../loading/index.js';
import { StarlarkError } from '../../starlark/index.js';
import type { TargetGraph } from '../configured/configured-target.js';

/** A `--aspects` value that names no aspect: Bazel reports it, then the analysis of the aspect failed. */
export class AspectResolutionError extends KilnError {
  constructor(
    message: string,
    /** The aspect as the message of the failed analysis names it (`//pkg:x.bzl%name`); undefined when it is not even a `.bzl%name`. */
    readonly aspect?: string,
  ) {
    super(message);
  }
}

/**
 * The aspect a `--aspects` value names: `<label of a .bzl file>%<exported name>`, the label from
 * the workspace root (Bazel's `//tools:defs.bzl%my_aspect`). Errors are Bazel's: `Aspect 'x' is
 * unknown` without a `%`, `cannot load '//x:y.bzl': ...`, `name is not exported from //x:y.bzl`.
 */
export function resolveCommandLineAspect(value: string, graph: Pick<TargetGraph, 'bzlModule'>): StarlarkAspect {
  const at = value.lastIndexOf('%');
  if (at < 0) throw new AspectResolutionError(`Aspect '${value}' is unknown`);
  const name = value.slice(at + 1);
  let bzl: string;
  try {
    bzl = Label.parse(value.slice(0, at)).toString();
  } catch (e) {
    throw new AspectResolutionError(`Invalid aspect '${value}': ${(e as Error).message}`);
  }
  const shown = `${bzl}%${name}`;
  if (!graph.bzlModule) throw new AspectResolutionError(`cannot load '${bzl}': no .bzl files here`, shown);
  let globals: ReadonlyMap<string, unknown>;
  try {
    globals = graph.bzlModule(bzl).globals;
  } catch (e) {
    // A missing file is the loader's StarlarkError; Bazel names the file it could not load.
    if (e instanceof StarlarkError && e.message.startsWith('no such file')) throw new AspectResolutionError(`cannot load '${bzl}': no such file`, shown);
    if (!isKilnError(e) && !(e instanceof StarlarkError)) throw e;
    throw new AspectResolutionError((e as Error).message, shown);
  }
  const aspect = globals.get(name);
  if (!(aspect instanceof StarlarkAspect) || aspect.name !== name) throw new AspectResolutionError(`${name} is not exported from ${bzl}`, shown);
  return aspect;
}
