import { KilnError, type Position } from '../../core/index.js';
import { expandLocations, ExpansionFailure, type LocationContext } from './location-expander.js';
import { expandMakeVariables } from './make-variable-expander.js';

export type GenruleCommandAttribute = 'cmd' | 'cmd_bash' | 'cmd_bat' | 'cmd_ps';

/** The Java runtime of the exec configuration, when one is configured. */
export interface JavaRuntimeVariables {
  /** $(JAVABASE): the runtime's home directory (exec path). */
  readonly javaHome: string;
  /** $(JAVA): the java launcher. */
  readonly java: string;
  /** $(JAVAC): the compiler, when the runtime is a JDK. */
  readonly javac?: string;
}

export interface GenruleCommandInput {
  readonly ruleLabel: string;
  /** The rule's position in its BUILD file. */
  readonly pos?: Position;
  /** The resolved (select-free) command attributes; an empty string counts as not set. */
  readonly commands: Readonly<Partial<Record<GenruleCommandAttribute, string>>>;
  /** The operating system the command runs on; only Linux-like systems run Bash here. */
  readonly hostOs?: NodeJS.Platform;
  /** Exec paths of every file of srcs, in order. */
  readonly srcs: readonly string[];
  /** Exec paths of the outs, in order. */
  readonly outs: readonly string[];
  /** Exec path of the rule's package in its output directory (bin or genfiles): $(RULEDIR). */
  readonly ruleDir: string;
  readonly locations: LocationContext;
  /** Variables of the configuration: COMPILATION_MODE, TARGET_CPU, BINDIR, GENDIR (see configurationMakeVariables). */
  readonly configVariables: ReadonlyMap<string, string>;
  /** Variables of the `toolchains` targets' TemplateVariableInfo, in the order the toolchains are listed. */
  readonly toolchainVariables?: ReadonlyMap<string, string>;
  readonly javaRuntime?: JavaRuntimeVariables;
}

/** What the genrule's action runs. */
export interface GenruleCommand {
  readonly attribute: GenruleCommandAttribute;
  /** The command after location substitution and Make-variable expansion. */
  readonly expanded: string;
  /**
   * `/bin/bash -c COMMAND`, whatever its length: execution alone decides when a command line is too
   * long and runs it from a script file instead (src/exec/command-script.ts).
   */
  readonly argv: readonly string[];
}

/**
 * The shell options of Bazel's genrule-setup.sh (2.1.0 and today): stop at the first failing
 * command, at an unset variable, and at a failing stage of a pipeline.
 */
export const GENRULE_SHELL_SETUP = 'set -euo pipefail';

/** A genrule command error, Bazel style: `in cmd attribute of genrule rule //pkg:x: ...`. */
export class GenruleCommandError extends KilnError {}

/**
 * Chooses the command (spec, genrule 3: cmd_ps > cmd_bat > cmd_bash > cmd on Windows; off Windows
 * cmd_bat and cmd_ps do not apply, so cmd_bash > cmd), then prepares it in the spec's order:
 * location substitution, Make variables, then `bash -c` with {@link GENRULE_SHELL_SETUP}.
 */
export function prepareGenruleCommand(input: GenruleCommandInput): GenruleCommand {
  const attribute = chooseCommand(input);
  const fail = (message: string): never => {
    throw new GenruleCommandError(`in ${attribute} attribute of genrule rule ${input.ruleLabel}: ${message}`, input.pos);
  };
  let expanded: string;
  try {
    const located = expandLocations(input.commands[attribute]!, input.locations);
    expanded = expandMakeVariables(located, (name) => lookupVariable(name, input));
  } catch (e) {
    if (e instanceof ExpansionFailure) return fail(e.message);
    throw e;
  }
  if (attribute === 'cmd_bat' || attribute === 'cmd_ps') {
    // Only reached on Windows hosts; Kiln runs genrules with Bash only.
    return fail(`${attribute} is not supported by Kiln yet`);
  }
  return { attribute, expanded, argv: ['/bin/bash', '-c', `${GENRULE_SHELL_SETUP}; ${expanded}`] };
}

function chooseCommand(input: GenruleCommandInput): GenruleCommandAttribute {
  const set = (a: GenruleCommandAttribute) => (input.commands[a] ?? '') !== '';
  const order: GenruleCommandAttribute[] = input.hostOs === 'win32' ? ['cmd_ps', 'cmd_bat', 'cmd_bash', 'cmd'] : ['cmd_bash', 'cmd'];
  const chosen = order.find(set);
  if (chosen === undefined) {
    // Bazel 2.1.0's message for a genrule with only cmd_bat (observed on Linux).
    throw new GenruleCommandError(
      `in cmd attribute of genrule rule ${input.ruleLabel}: missing value for \`cmd\` attribute, you can also set \`cmd_ps\` or \`cmd_bat\` on Windows and \`cmd_bash\` on other platforms.`,
      input.pos,
    );
  }
  return chosen;
}

const JAVA_VARIABLES = new Set(['JAVA', 'JAVABASE', 'JAVAC']);

/** What the shell reads as more than a word's letters: blanks, quotes, `$`, command separators, redirections, subshells. */
const SHELL_ACTIVE = /[\s$`;&|<>()'"\\]/;

/**
 * `paths`, after checking that each reads as itself in the shell. Bazel puts $(SRCS), $<,
 * $(OUTS) and $@ into the command unquoted (GenRuleBase; only the location functions quote),
 * so a file named `a;touch X.txt` would run `touch X` there. Kiln refuses such a name instead.
 * A name with `$` is checked as its expansion will read: `$(touch X)` is first Bazel's own
 * `$(touch) not defined`, and `$$` becomes a `$` the shell would expand.
 */
function unquotedPaths(variable: string, paths: readonly string[], input: GenruleCommandInput): readonly string[] {
  for (const path of paths) {
    const read = path.includes('$') ? expandMakeVariables(path, (name) => lookupVariable(name, input)) : path;
    const active = SHELL_ACTIVE.exec(read);
    if (active) {
      const shown = /\s/.test(active[0]) ? 'a blank' : `'${active[0]}'`;
      throw new ExpansionFailure(
        `${variable} would put '${read}' into the command unquoted, and the shell interprets its ${shown}: rename the file, or use $(execpaths ...) or $(locations ...), which quote each path`,
      );
    }
  }
  return paths;
}

/** Genrule variables first, then the toolchains', then Java's, then the configuration's. */
function lookupVariable(name: string, input: GenruleCommandInput): string | undefined {
  switch (name) {
    case 'SRCS':
      return unquotedPaths('$(SRCS)', input.srcs, input).join(' ');
    case '<':
      if (input.srcs.length === 0) throw new ExpansionFailure("variable '$<' : no input file");
      if (input.srcs.length > 1) throw new ExpansionFailure("variable '$<' : more than one input file");
      return unquotedPaths('$<', input.srcs, input)[0];
    case 'OUTS':
      return unquotedPaths('$(OUTS)', input.outs, input).join(' ');
    case '@':
      if (input.outs.length === 0) throw new ExpansionFailure("variable '$@' : no output file");
      if (input.outs.length > 1) throw new ExpansionFailure("variable '$@' : more than one output file");
      return unquotedPaths('$@', input.outs, input)[0];
    case '@D':
      // One out: its directory. Several: the package directory, even when all outs share a subdirectory.
      return input.outs.length === 1 ? dirname(input.outs[0]!) : input.ruleDir;
    case 'RULEDIR':
      return input.ruleDir;
  }
  const fromToolchain = input.toolchainVariables?.get(name);
  if (fromToolchain !== undefined) return fromToolchain;
  if (JAVA_VARIABLES.has(name)) {
    const java = input.javaRuntime;
    if (!java) {
      throw new ExpansionFailure(
        `$(${name}) not defined: no Java runtime is configured for the exec configuration (set --host_javabase or list a Java runtime in toolchains)`,
      );
    }
    if (name === 'JAVA') return java.java;
    if (name === 'JAVABASE') return java.javaHome;
    if (java.javac === undefined) throw new ExpansionFailure(`$(JAVAC) not defined: the Java runtime at ${java.javaHome} has no javac`);
    return java.javac;
  }
  return input.configVariables.get(name);
}

function dirname(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '.' : path.slice(0, slash);
}
