import { blazeQuery } from '../../core/index.js';
import type { PlainAttrValue } from '../../loading/index.js';
import type { QueryTarget } from '../target-loader.js';
import type { OutputEnvironment, OutputFormatter } from './formatter.js';
import { formatLocation } from './location-output.js';
import { packageSpecText, ruleAttributes, ruleInputs, type RuleAttribute } from './rule-attributes.js';

const Discriminator = blazeQuery.Attribute_Discriminator;

/** `--output=proto`: one `blaze_query.QueryResult` holding every target. */
export const protoOutput: OutputFormatter = {
  ordering: 'targets',
  format: (targets, env) => blazeQuery.QueryResult.encode({ target: targets.map((t) => targetMessage(t, env)) }),
};

/** `--output=streamed_proto`: each `blaze_query.Target` length-delimited (varint size, then the message). */
export const streamedProtoOutput: OutputFormatter = {
  ordering: 'targets',
  format: (targets, env) => {
    const parts: Buffer[] = [];
    for (const t of targets) {
      const bytes = blazeQuery.Target.encode(targetMessage(t, env));
      parts.push(varint(bytes.length), bytes);
    }
    return Buffer.concat(parts);
  },
};

/** `--output=streamed_jsonproto`: each `blaze_query.Target` as one line of proto3 JSON. */
export const streamedJsonProtoOutput: OutputFormatter = {
  ordering: 'targets',
  format: (targets, env) => {
    const type = blazeQuery.Target.type;
    return targets
      .map(
        (t) =>
          `${JSON.stringify(type.toObject(type.fromObject(targetMessage(t, env) as Record<string, unknown>), { enums: String, longs: Number, json: true }))}\n`,
      )
      .join('');
  },
};

function varint(n: number): Buffer {
  const bytes: number[] = [];
  while (n > 0x7f) {
    bytes.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  bytes.push(n);
  return Buffer.from(bytes);
}

/** The build.proto Target of one result target. */
export function targetMessage(t: QueryTarget, env: OutputEnvironment): blazeQuery.TargetInit {
  const name = t.label.toString();
  const loc = t.target.location;
  const location = formatLocation(loc, (f) => env.absolutePath(f));
  const target = t.target;
  switch (target.kind) {
    case 'rule':
      return {
        type: blazeQuery.Target_Discriminator.RULE,
        rule: {
          name,
          ruleClass: target.ruleClass,
          location,
          attribute: ruleAttributes(target, true).map(attributeMessage),
          ruleInput: ruleInputs(target),
          ruleOutput: target.outputs.map((o) => t.label.sibling(o).toString()),
          ...(target.starlarkDefined ? { isSkylark: true } : {}),
        },
      };
    case 'source': {
      const isBuildFile = t.pkg.buildFile.endsWith(`/${target.name}`) || t.pkg.buildFile === target.name;
      return {
        type: blazeQuery.Target_Discriminator.SOURCE_FILE,
        sourceFile: {
          name,
          location,
          visibilityLabel: [...(target.visibility ?? t.pkg.defaults.visibility ?? ['//visibility:private'])],
          ...(isBuildFile ? { subinclude: [...env.loadsOf(t)], packageContainsErrors: t.pkg.errors.length > 0 } : {}),
        },
      };
    }
    case 'generated':
      return {
        type: blazeQuery.Target_Discriminator.GENERATED_FILE,
        generatedFile: { name, generatingRule: t.label.sibling(target.generatingRule).toString(), location },
      };
    case 'package_group':
      return {
        type: blazeQuery.Target_Discriminator.PACKAGE_GROUP,
        packageGroup: { name, containedPackage: target.packages.map(packageSpecText), includedPackageGroup: [...target.includes] },
      };
  }
}

/** Bazel's no-dependency label attributes, which build.proto types as strings. */
const NODEP_LABEL_ATTRIBUTES: ReadonlyMap<string, blazeQuery.Attribute_Discriminator> = new Map([
  ['visibility', Discriminator.STRING_LIST],
  ['default_constraint_value', Discriminator.STRING],
]);

function attributeMessage(a: RuleAttribute): blazeQuery.AttributeInit {
  const nodep = NODEP_LABEL_ATTRIBUTES.get(a.name);
  if (nodep !== undefined) {
    const value = a.value;
    const base = { name: a.name, explicitlySpecified: a.explicit, type: nodep };
    if (nodep === Discriminator.STRING) return typeof value === 'string' ? { ...base, stringValue: value } : base;
    return { ...base, stringListValue: Array.isArray(value) ? (value as string[]) : [] };
  }
  const base = { name: a.name, explicitlySpecified: a.explicit };
  const v = a.value;
  const strings = (x: PlainAttrValue | undefined) => (Array.isArray(x) ? (x as unknown[]).filter((s): s is string => typeof s === 'string') : []);
  const pairs = (x: PlainAttrValue | undefined) => (Array.isArray(x) ? (x as unknown[]).filter((p): p is [string, PlainAttrValue] => Array.isArray(p)) : []);
  switch (a.type) {
    case 'bool':
      return { ...base, type: Discriminator.BOOLEAN, ...(typeof v === 'boolean' ? { intValue: v ? 1 : 0, booleanValue: v } : {}) };
    case 'int':
      return { ...base, type: Discriminator.INTEGER, ...(typeof v === 'number' ? { intValue: v } : {}) };
    case 'int_list':
      return {
        ...base,
        type: Discriminator.INTEGER_LIST,
        intListValue: Array.isArray(v) ? (v as unknown[]).filter((n): n is number => typeof n === 'number') : [],
      };
    case 'string':
      return { ...base, type: Discriminator.STRING, ...(typeof v === 'string' ? { stringValue: v } : {}) };
    case 'label':
      return { ...base, type: Discriminator.LABEL, ...(typeof v === 'string' ? { stringValue: v } : {}) };
    case 'output':
      return { ...base, type: Discriminator.OUTPUT, ...(typeof v === 'string' ? { stringValue: v } : {}) };
    case 'string_list':
      return { ...base, type: Discriminator.STRING_LIST, stringListValue: strings(v) };
    case 'label_list':
      return { ...base, type: Discriminator.LABEL_LIST, stringListValue: strings(v) };
    case 'output_list':
      return { ...base, type: Discriminator.OUTPUT_LIST, stringListValue: strings(v) };
    case 'license':
      return { ...base, type: Discriminator.LICENSE, license: { licenseType: strings(v) } };
    case 'string_dict':
      return { ...base, type: Discriminator.STRING_DICT, stringDictValue: pairs(v).map(([key, value]) => ({ key, value: String(value) })) };
    case 'label_keyed_string_dict':
      return {
        ...base,
        type: Discriminator.LABEL_KEYED_STRING_DICT,
        labelKeyedStringDictValue: pairs(v).map(([key, value]) => ({ key, value: String(value) })),
      };
    case 'string_list_dict':
      return { ...base, type: Discriminator.STRING_LIST_DICT, stringListDictValue: pairs(v).map(([key, value]) => ({ key, value: strings(value) })) };
    case 'label_list_dict':
      return { ...base, type: Discriminator.LABEL_LIST_DICT, labelListDictValue: pairs(v).map(([key, value]) => ({ key, value: strings(value) })) };
  }
}
