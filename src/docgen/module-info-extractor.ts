import { ModuleExtension, Provider, RepositoryRule, StarlarkAspect, StarlarkRuleFunction, SymbolicMacro, type BzlModule } from '../loading/index.js';
import {
  AttributeType,
  type AttributeInfoInit,
  type ModuleInfoInit,
  type OriginKeyInit,
  type ProviderNameGroupInit,
} from '../../proto/gen/stardoc_output/index.js';
import { StarFunction, StarStruct, typeName, type Value } from '../starlark/index.js';
import { documentableAttributes, RULE_NAME_ATTRIBUTE, type ProviderGroupNamer } from './attribute-info.js';
import { findDocComments } from './doc-comments.js';
import { ExtractionError } from './extraction-error.js';
import { functionInfo, type FunctionContext } from './function-info.js';
import type { LabelRenderer } from './label-renderer.js';
import { trimDocString } from './trim-doc-string.js';

export interface ExtractionOptions {
  readonly module: BzlModule;
  /** Other evaluated modules by display path: where loaded functions were defined. */
  readonly moduleAt: (displayPath: string) => BzlModule | undefined;
  readonly renderer: LabelRenderer;
  /** Empty: every public entity; otherwise only these qualified names and what they contain. */
  readonly symbolNames: readonly string[];
  readonly allowUnusedDocComments: boolean;
}

// Present-day Bazel documents only `name` before a repository rule's own attributes (its
// WORKSPACE-only `repo_mapping` went with WORKSPACE).
const IMPLICIT_REPOSITORY_RULE_ATTRIBUTES: readonly AttributeInfoInit[] = [
  { name: 'name', type: AttributeType.NAME, mandatory: true, docString: 'A unique name for this repository.' },
];

const IMPLICIT_MACRO_ATTRIBUTES: readonly AttributeInfoInit[] = [
  {
    name: 'name',
    type: AttributeType.NAME,
    mandatory: true,
    docString:
      "A unique name for this macro instance. Normally, this is also the name for the macro's main or only target. The names of any other targets that this macro might create will be this name with a string suffix.",
  },
  {
    name: 'visibility',
    type: AttributeType.LABEL_LIST,
    nonconfigurable: true,
    nativelyDefined: true,
    docString:
      "The visibility to be passed to this macro's exported targets. It always implicitly includes the location where this macro is instantiated, so this attribute only needs to be explicitly set if you want the macro's targets to be additionally visible somewhere else.",
  },
];

/** Bazel's public names: the first character is a letter. */
const isPublic = (name: string) => /^[A-Za-z]/.test(name);

/** Where a misplaced doc comment's documentation belongs instead, by the kind of value. */
function documentedElsewhere(v: Value): string | undefined {
  if (v instanceof StarFunction) return 'a function must be provided in a docstring at the top of the function body';
  if (v instanceof StarlarkRuleFunction) return 'a rule must be provided in the doc argument to rule()';
  if (v instanceof Provider) return 'a provider must be provided in the doc argument to provider()';
  if (v instanceof StarlarkAspect) return 'an aspect must be provided in the doc argument to aspect()';
  if (v instanceof SymbolicMacro) return 'a macro must be provided in the doc argument to macro()';
  if (v instanceof RepositoryRule) return 'a repository rule must be provided in the doc argument to repository_rule()';
  if (v instanceof ModuleExtension) return 'a module extension must be provided in the doc argument to module_extension()';
  return undefined;
}

/**
 * The ModuleInfo of an evaluated module, as Bazel's starlark_doc_extract builds it: every public
 * global (and public struct field, by qualified name) that is a rule, provider, function, aspect,
 * macro, repository rule, module extension or `#:`-documented value, in the order of the globals.
 */
export function extractModuleInfo(options: ExtractionOptions): ModuleInfoInit {
  const { module, renderer } = options;
  const docComments = findDocComments(module.source, module.file);
  if (!options.allowUnusedDocComments && docComments.unusedLines.length > 0) {
    const lines = docComments.unusedLines;
    throw new ExtractionError(
      `in ${module.displayPath}: unexpected or conflicting doc comments on line${lines.length > 1 ? 's' : ''} ${lines.join(', ')}; ` +
        'a doc comment must be attached to the declaration of a global variable',
    );
  }
  const info: ModuleInfoInit = {
    ruleInfo: [],
    providerInfo: [],
    funcInfo: [],
    aspectInfo: [],
    file: renderer.render(module.label),
    moduleExtensionInfo: [],
    repositoryRuleInfo: [],
    macroInfo: [],
    starlarkOtherSymbolInfo: [],
  };
  const moduleDoc = moduleDocstring(module);
  if (moduleDoc !== undefined) info.moduleDocstring = trimDocString(moduleDoc);

  // A provider is named by the first qualified name under which a user of this module sees it,
  // whatever symbol_names asks for, so a rule's documentation does not depend on the filter.
  const providerNames = new Map<Provider, string>();
  traverse(
    module,
    () => true,
    (name, v) => {
      if (v instanceof Provider && !providerNames.has(v)) providerNames.set(v, name);
    },
  );
  const providerGroup: ProviderGroupNamer = (providers) => providerNameGroup(providers, providerNames, renderer);
  const functions: FunctionContext = { renderer, moduleAt: options.moduleAt };
  const wanted = (name: string) => options.symbolNames.length === 0 || options.symbolNames.includes(name);
  const attributes = (specs: Parameters<typeof documentableAttributes>[0], withNative = false) =>
    documentableAttributes(specs, renderer, providerGroup, withNative);

  const exportedOrigin = (e: { readonly name: string; readonly bzlLabel: string }): OriginKeyInit => ({ name: e.name, file: renderer.render(e.bzlLabel) });

  traverse(module, wanted, (name, v) => {
    const comment = name.includes('.') ? undefined : docComments.byGlobal.get(name);
    const elsewhere = documentedElsewhere(v);
    if (comment && elsewhere && !options.allowUnusedDocComments) {
      throw new ExtractionError(`in ${module.displayPath}: unexpected doc comment for ${name} on line ${comment.line}; API documentation for ${elsewhere}`);
    }
    if (v instanceof StarlarkRuleFunction) {
      const rc = v.ruleClass;
      if (!rc?.starlark) return;
      const rule = info.ruleInfo!;
      const provides = v.options.provides;
      rule.push({
        ruleName: name,
        ...docString(v.options.doc),
        attribute: [RULE_NAME_ATTRIBUTE, ...attributes(v.attributes)],
        originKey: { name: rc.name, file: renderer.render(fileOfKey(rc.starlark.key)) },
        ...(provides.length > 0 ? { advertisedProviders: providerGroup(provides) } : {}),
        ...(v.options.test ? { test: true } : {}),
        ...(v.options.test || v.options.executable ? { executable: true } : {}),
      });
    } else if (v instanceof SymbolicMacro) {
      if (!v.exported.value) return;
      info.macroInfo!.push({
        macroName: name,
        ...docString(v.doc),
        attribute: [...IMPLICIT_MACRO_ATTRIBUTES, ...attributes(v.attributes, true).filter((a) => a.name !== 'visibility')],
        originKey: exportedOrigin(v.exported.value),
        ...(v.finalizer ? { finalizer: true } : {}),
      });
    } else if (v instanceof Provider) {
      if (!v.isExported || !v.key.includes('%')) return;
      const fields = [...(v.fields ?? new Map<string, string>())].filter(([f]) => isPublic(f));
      info.providerInfo!.push({
        providerName: name,
        ...docString(v.doc),
        fieldInfo: fields.map(([f, doc]) => ({ name: f, ...docString(doc) })),
        originKey: { name: v.name, file: renderer.render(fileOfKey(v.key)) },
        ...(v.init instanceof StarFunction ? { init: functionInfo(functions, name, v.init) } : {}),
      });
    } else if (v instanceof StarFunction) {
      info.funcInfo!.push(functionInfo(functions, name, v));
    } else if (v instanceof StarlarkAspect) {
      if (!v.exported.value) return;
      info.aspectInfo!.push({
        aspectName: name,
        ...docString(v.doc),
        aspectAttribute: v.attrAspects.filter(isPublic),
        attribute: attributes(v.attributes),
        originKey: exportedOrigin(v.exported.value),
      });
    } else if (v instanceof RepositoryRule) {
      if (!v.exported.value) return;
      info.repositoryRuleInfo!.push({
        ruleName: name,
        ...docString(v.doc),
        attribute: [...IMPLICIT_REPOSITORY_RULE_ATTRIBUTES, ...attributes(v.attributes).filter((a) => a.name !== 'name')],
        environ: [...v.environ],
        originKey: exportedOrigin(v.exported.value),
      });
    } else if (v instanceof ModuleExtension) {
      info.moduleExtensionInfo!.push({
        extensionName: name,
        ...docString(v.doc),
        tagClass: [...v.tagClasses].map(([tag, tc]) => ({ tagName: tag, ...docString(tc.doc), attribute: attributes(tc.attributes) })),
        originKey: { file: renderer.render(v.definingBzlLabel) },
      });
    } else if (comment) {
      info.starlarkOtherSymbolInfo!.push({ name, doc: comment.doc, typeName: typeName(v) });
    }
  });
  return withoutDefaults(info);
}

/**
 * The message without singular fields at their proto3 default ('', 0, false): protobufjs writes a
 * field that is present even at its default, Java (Bazel) never does, and the bytes must be Bazel's.
 */
function withoutDefaults<T>(message: T): T {
  if (Array.isArray(message)) return message.map(withoutDefaults) as T;
  if (message === null || typeof message !== 'object') return message;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(message)) {
    if (v === '' || v === 0 || v === false || v === undefined) continue;
    out[k] = withoutDefaults(v);
  }
  return out as T;
}

const docString = (doc: string): { docString?: string } => {
  const trimmed = trimDocString(doc);
  return trimmed === '' ? {} : { docString: trimmed };
};

/** `//pkg:defs.bzl%Name` -> `//pkg:defs.bzl`. */
const fileOfKey = (key: string) => key.slice(0, key.lastIndexOf('%'));

function providerNameGroup(
  providers: readonly { readonly key: string; readonly name: string }[],
  qualifiedNames: ReadonlyMap<Provider, string>,
  renderer: LabelRenderer,
): ProviderNameGroupInit {
  const names: string[] = [];
  const keys: OriginKeyInit[] = [];
  for (const p of providers) {
    const provider = p instanceof Provider ? p : undefined;
    names.push((provider && qualifiedNames.get(provider)) ?? p.name);
    if (!provider)
      keys.push({ name: p.name }); // a legacy provider named by a string
    else if (!p.key.includes('%')) keys.push({ name: p.name, file: '<native>' });
    else keys.push({ name: p.name, file: renderer.render(fileOfKey(p.key)) });
  }
  return { providerName: names, originKey: keys };
}

/**
 * Visits each public global and, inside structs, each public field by qualified name (`a.b.c`),
 * calling `visit` for those `wanted` says yes to, or whose enclosing struct it said yes to.
 */
function traverse(module: BzlModule, wanted: (qualifiedName: string) => boolean, visit: (qualifiedName: string, v: Value) => void): void {
  const walk = (name: string, v: Value, ancestorWanted: boolean): void => {
    const yes = ancestorWanted || wanted(name);
    if (yes) visit(name, v);
    if (v instanceof StarStruct) {
      for (const field of v.names) {
        const fv = v.attr(field);
        if (isPublic(field) && fv !== undefined) walk(`${name}.${field}`, fv, yes);
      }
    }
  };
  for (const [name, v] of module.globals) if (isPublic(name)) walk(name, v, false);
}

/** The string literal that opens the file, if any. */
function moduleDocstring(module: BzlModule): string | undefined {
  const first = module.file.stmts[0];
  return first?.kind === 'ExprStmt' && first.expr.kind === 'StringLiteral' ? first.expr.value : undefined;
}
