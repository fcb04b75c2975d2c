import { describe, expect, it } from 'vitest';
import { analysisV2, protoJson, protoText } from '../../../src/core/index.js';

/**
 * analysis_v2.proto's wire: every field's number and type as upstream has it. Fields marked 4.2.3
 * are in Bazel 4.2.3's src/main/protobuf/analysis_v2.proto (its embedded_tools); the others are
 * present-day Bazel's additions.
 */
const UPSTREAM: Readonly<Record<string, readonly (readonly [name: string, id: number, type: string, repeated: boolean])[]>> = {
  ActionGraphContainer: [
    ['artifacts', 1, 'Artifact', true],
    ['actions', 2, 'Action', true],
    ['targets', 3, 'Target', true],
    ['depSetOfFiles', 4, 'DepSetOfFiles', true],
    ['configuration', 5, 'Configuration', true],
    ['aspectDescriptors', 6, 'AspectDescriptor', true],
    ['ruleClasses', 7, 'RuleClass', true],
    ['pathFragments', 8, 'PathFragment', true],
  ],
  Artifact: [
    ['id', 1, 'uint32', false],
    ['pathFragmentId', 2, 'uint32', false],
    ['isTreeArtifact', 3, 'bool', false],
  ],
  Action: [
    ['targetId', 1, 'uint32', false],
    ['aspectDescriptorIds', 2, 'uint32', true],
    ['actionKey', 3, 'string', false],
    ['mnemonic', 4, 'string', false],
    ['configurationId', 5, 'uint32', false],
    ['arguments', 6, 'string', true],
    ['environmentVariables', 7, 'KeyValuePair', true],
    ['inputDepSetIds', 8, 'uint32', true],
    ['outputIds', 9, 'uint32', true],
    ['discoversInputs', 10, 'bool', false],
    ['executionInfo', 11, 'KeyValuePair', true],
    ['paramFiles', 12, 'ParamFile', true],
    ['primaryOutputId', 13, 'uint32', false],
    // Present-day Bazel's.
    ['executionPlatform', 14, 'string', false],
    ['templateContent', 15, 'string', false],
    ['substitutions', 16, 'KeyValuePair', true],
    ['fileContents', 17, 'string', false],
    ['unresolvedSymlinkTarget', 18, 'string', false],
    ['isExecutable', 19, 'bool', false],
  ],
  Target: [
    ['id', 1, 'uint32', false],
    ['label', 2, 'string', false],
    ['ruleClassId', 3, 'uint32', false],
  ],
  RuleClass: [
    ['id', 1, 'uint32', false],
    ['name', 2, 'string', false],
  ],
  AspectDescriptor: [
    ['id', 1, 'uint32', false],
    ['name', 2, 'string', false],
    ['parameters', 3, 'KeyValuePair', true],
  ],
  DepSetOfFiles: [
    ['id', 1, 'uint32', false],
    ['transitiveDepSetIds', 2, 'uint32', true],
    ['directArtifactIds', 3, 'uint32', true],
  ],
  Configuration: [
    ['id', 1, 'uint32', false],
    ['mnemonic', 2, 'string', false],
    ['platformName', 3, 'string', false],
    ['checksum', 4, 'string', false],
    ['isTool', 5, 'bool', false],
  ],
  KeyValuePair: [
    ['key', 1, 'string', false],
    ['value', 2, 'string', false],
  ],
  ConfiguredTarget: [
    ['target', 1, 'blaze_query.Target', false],
    ['configuration', 2, 'Configuration', false],
    ['configurationId', 3, 'uint32', false],
  ],
  CqueryResult: [
    ['results', 1, 'ConfiguredTarget', true],
    ['configurations', 2, 'Configuration', true],
  ],
  ParamFile: [
    ['execPath', 1, 'string', false],
    ['arguments', 2, 'string', true],
  ],
  PathFragment: [
    ['id', 1, 'uint32', false],
    ['label', 2, 'string', false],
    ['parentId', 3, 'uint32', false],
  ],
};

describe('analysis_v2.proto', () => {
  it("has upstream's messages, field numbers, types and labels", () => {
    for (const [message, fields] of Object.entries(UPSTREAM)) {
      const codec = (analysisV2 as unknown as Record<string, { type: { fieldsArray: { name: string; id: number; type: string; repeated: boolean }[] } }>)[
        message
      ]!;
      const actual = codec.type.fieldsArray.map((f) => [f.name, f.id, f.type, f.repeated]);
      expect(actual, message).toEqual(fields.map((f) => [...f]));
    }
  });

  it('prints proto3 JSON (camelCase, defaults left out) and text format (snake_case, field order, escapes)', () => {
    const message: analysisV2.ActionGraphContainerInit = {
      actions: [{ targetId: 1, mnemonic: 'Genrule', arguments: ['/bin/bash', '-c', 'echo "a\'b"\n'], discoversInputs: false }],
      pathFragments: [{ id: 2, label: 'out.txt', parentId: 1 }],
    };
    expect(JSON.parse(protoJson(analysisV2.ActionGraphContainer, message))).toEqual({
      actions: [{ targetId: 1, mnemonic: 'Genrule', arguments: ['/bin/bash', '-c', 'echo "a\'b"\n'] }],
      pathFragments: [{ id: 2, label: 'out.txt', parentId: 1 }],
    });
    expect(protoText(analysisV2.ActionGraphContainer, message)).toBe(
      'actions {\n  target_id: 1\n  mnemonic: "Genrule"\n  arguments: "/bin/bash"\n  arguments: "-c"\n  arguments: "echo \\"a\'b\\"\\n"\n}\npath_fragments {\n  id: 2\n  label: "out.txt"\n  parent_id: 1\n}\n',
    );
  });
});
