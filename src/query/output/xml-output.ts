import type { PlainAttrValue } from '../../loading/index.js';
import type { QueryTarget } from '../target-loader.js';
import type { OutputEnvironment, OutputFormatter } from './formatter.js';
import { formatLocation } from './location-output.js';
import { packageSpecText, ruleAttributes, ruleInputs } from './rule-attributes.js';

/** `--output=xml`: Bazel 2.1's `<query version="2">` document, explicit attributes only. */
export const xmlOutput: OutputFormatter = {
  ordering: 'targets',
  format: (targets, env) => {
    let out = '<?xml version="1.1" encoding="UTF-8" standalone="no"?>\n<query version="2">\n';
    for (const t of targets) out += targetElement(t, env);
    return `${out}</query>\n`;
  },
};

function escape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function location(t: QueryTarget, env: OutputEnvironment): string {
  const loc = t.target.location;
  return escape(formatLocation(loc, (f) => env.absolutePath(f)));
}

function targetElement(t: QueryTarget, env: OutputEnvironment): string {
  const name = escape(t.label.toString());
  const target = t.target;
  switch (target.kind) {
    case 'rule': {
      let out = `    <rule class="${escape(target.ruleClass)}" location="${location(t, env)}" name="${name}">\n`;
      for (const a of ruleAttributes(target, false)) out += attributeElement(a.name, a.type, a.value);
      for (const input of ruleInputs(target)) out += `        <rule-input name="${escape(input)}"/>\n`;
      for (const o of target.outputs) out += `        <rule-output name="${escape(t.label.sibling(o).toString())}"/>\n`;
      return `${out}    </rule>\n`;
    }
    case 'source': {
      const visibility = target.visibility ?? t.pkg.defaults.visibility ?? ['//visibility:private'];
      // A BUILD file also says whether its package has errors and which .bzl files it loads.
      const isBuildFile = t.pkg.buildFile.endsWith(`/${target.name}`) || t.pkg.buildFile === target.name;
      return (
        `    <source-file location="${location(t, env)}" name="${name}"${isBuildFile ? ` package_contains_errors="${t.pkg.errors.length > 0}"` : ''}>\n` +
        (isBuildFile
          ? env
              .loadsOf(t)
              .map((l) => `        <load name="${escape(l)}"/>\n`)
              .join('')
          : '') +
        visibility.map((v) => `        <visibility-label name="${escape(v)}"/>\n`).join('') +
        '    </source-file>\n'
      );
    }
    case 'generated':
      return `    <generated-file generating-rule="${escape(t.label.sibling(target.generatingRule).toString())}" location="${location(t, env)}" name="${name}"/>\n`;
    case 'package_group':
      return (
        `    <package-group location="${location(t, env)}" name="${name}">\n` +
        stringList('includes', target.includes) +
        stringList('packages', target.packages.map(packageSpecText)) +
        '    </package-group>\n'
      );
  }
}

function stringList(name: string, values: readonly string[]): string {
  if (values.length === 0) return `        <list name="${name}"/>\n`;
  return `        <list name="${name}">\n${values.map((v) => `            <string value="${escape(v)}"/>\n`).join('')}        </list>\n`;
}

function attributeElement(name: string, type: string, value: PlainAttrValue | undefined): string {
  const pad = '        ';
  if (value === undefined || value === null) return '';
  const n = escape(name);
  switch (type) {
    case 'bool':
      return `${pad}<boolean name="${n}" value="${value ? 'true' : 'false'}"/>\n`;
    case 'int':
      return `${pad}<int name="${n}" value="${value}"/>\n`;
    case 'label':
    case 'output':
      return `${pad}<${type} name="${n}" value="${escape(String(value))}"/>\n`;
    case 'label_list':
    case 'output_list':
    case 'string_list':
    case 'license': {
      const item = type === 'label_list' ? 'label' : type === 'output_list' ? 'output' : 'string';
      return `${pad}<list name="${n}">\n${(value as string[]).map((v) => `${pad}    <${item} value="${escape(v)}"/>\n`).join('')}${pad}</list>\n`;
    }
    case 'string_dict':
    case 'string_list_dict':
    case 'label_keyed_string_dict':
    case 'label_list_dict': {
      let out = `${pad}<dict name="${n}">\n`;
      for (const [k, v] of value as readonly (readonly [string, PlainAttrValue])[]) {
        const keyItem = type === 'label_keyed_string_dict' ? 'label' : 'string';
        const values = Array.isArray(v)
          ? `${pad}        <list>\n${(v as string[]).map((x) => `${pad}            <${type === 'label_list_dict' ? 'label' : 'string'} value="${escape(x)}"/>\n`).join('')}${pad}        </list>\n`
          : `${pad}        <string value="${escape(String(v))}"/>\n`;
        out += `${pad}    <pair>\n${pad}        <${keyItem} value="${escape(k)}"/>\n${values}${pad}    </pair>\n`;
      }
      return `${out}${pad}</dict>\n`;
    }
    default:
      return `${pad}<string name="${n}" value="${escape(String(value))}"/>\n`;
  }
}
