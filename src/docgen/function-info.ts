import { formatPosition } from '../core/index.js';
import type { BzlModule } from '../loading/index.js';
import { FunctionParamRole, type FunctionParamInfoInit, type OriginKeyInit, type StarlarkFunctionInfoInit } from '../../proto/gen/stardoc_output/index.js';
import { walk, type Param, type StarFunction } from '../starlark/index.js';
import { parseDocstring, type DocstringError } from './docstring.js';
import { ExtractionError } from './extraction-error.js';
import type { LabelRenderer } from './label-renderer.js';
import { trimDocString } from './trim-doc-string.js';

/** What function documentation needs from the extraction: the defining modules and the label renderer. */
export interface FunctionContext {
  readonly renderer: LabelRenderer;
  /** The evaluated module whose file has this display path. */
  readonly moduleAt: (displayPath: string) => BzlModule | undefined;
}

/** StarlarkFunctionInfo of a def or lambda, documented under `qualifiedName`. */
export function functionInfo(context: FunctionContext, qualifiedName: string, fn: StarFunction): StarlarkFunctionInfoInit {
  const module = context.moduleAt(fn.code.pos.file);
  const syntax = module ? findFunctionSyntax(module, fn) : undefined;
  const info: StarlarkFunctionInfoInit = { functionName: qualifiedName, originKey: originKey(context, module, fn) };
  let paramDocs: ReadonlyMap<string, string> = new Map();
  if (syntax?.doc !== undefined) {
    const errors: DocstringError[] = [];
    const parsed = parseDocstring(trimDocString(syntax.doc), errors);
    if (errors.length > 0) {
      const at = formatPosition(fn.code.pos);
      const lines = errors.map((e) => `  ${at} line ${e.line}: ${e.message.replace(/\n/g, ' ')}\n`).join('');
      throw new ExtractionError(
        `Unable to generate documentation for function ${qualifiedName} (defined at ${at}) due to malformed docstring. Parse errors:\n${lines}`,
      );
    }
    info.docString = [parsed.summary, parsed.description].filter((s) => s !== '').join('\n\n');
    paramDocs = parsed.params;
    if (parsed.returns !== '') info.return = { docString: parsed.returns };
    if (parsed.deprecated !== '') info.deprecated = { docString: parsed.deprecated };
  }
  info.parameter = parameters(context, fn, syntax?.params ?? [], paramDocs);
  return info;
}

function parameters(context: FunctionContext, fn: StarFunction, params: readonly Param[], docs: ReadonlyMap<string, string>): FunctionParamInfoInit[] {
  const code = fn.code;
  const n = code.paramNames.length;
  const firstOptional = n - fn.defaults.length;
  const out: FunctionParamInfoInit[] = code.paramNames.map((name, i) => {
    const d = i >= firstOptional ? fn.defaults[i - firstOptional] : undefined;
    const doc = docs.get(name);
    const role = i < n - code.numKwonly ? FunctionParamRole.PARAM_ROLE_ORDINARY : FunctionParamRole.PARAM_ROLE_KEYWORD_ONLY;
    const param: FunctionParamInfoInit = { name, role, ...(doc ? { docString: doc } : {}) };
    if (d === undefined || typeof d === 'symbol') param.mandatory = true;
    else param.defaultValue = context.renderer.repr(d);
    return param;
  });
  const special = (mode: 'star' | 'starstar', prefix: string, role: FunctionParamRole) => {
    const name = params.find((p) => p.mode === mode && p.name)?.name?.name ?? (mode === 'star' ? 'args' : 'kwargs');
    const doc = docs.get(prefix + name);
    out.push({ name, role, ...(doc ? { docString: doc } : {}) });
  };
  if (code.hasVarargs) special('star', '*', FunctionParamRole.PARAM_ROLE_VARARGS);
  if (code.hasKwargs) special('starstar', '**', FunctionParamRole.PARAM_ROLE_KWARGS);
  return out;
}

/** The first global of the defining module holding the function (none for lambdas and nested defs). */
function originKey(context: FunctionContext, module: BzlModule | undefined, fn: StarFunction): OriginKeyInit {
  if (!module) return {};
  const key: OriginKeyInit = { file: context.renderer.render(module.label) };
  for (const [name, v] of module.globals) {
    if (v === fn) {
      key.name = name;
      break;
    }
  }
  return key;
}

interface FunctionSyntax {
  readonly params: readonly Param[];
  /** The string literal that opens a def's body. */
  readonly doc?: string;
}

/** The def or lambda at the function's position in its module's syntax tree. */
function findFunctionSyntax(module: BzlModule, fn: StarFunction): FunctionSyntax | undefined {
  const { line, col } = fn.code.pos;
  let found: FunctionSyntax | undefined;
  walk(module.file, (n) => {
    if (found) return false;
    if ((n.kind === 'DefStmt' || n.kind === 'LambdaExpr') && n.pos.line === line && n.pos.col === col) {
      const first = n.kind === 'DefStmt' ? n.body[0] : undefined;
      const doc = first?.kind === 'ExprStmt' && first.expr.kind === 'StringLiteral' ? first.expr.value : undefined;
      found = { params: n.params, ...(doc !== undefined ? { doc } : {}) };
      return false;
    }
    return true;
  });
  return found;
}
