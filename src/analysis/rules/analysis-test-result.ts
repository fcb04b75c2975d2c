import { inProcessAction, type Action, type DerivedArtifact } from '../../actions/index.js';
import { ANALYSIS_TEST_RESULT_INFO, type ProviderInstance } from '../../loading/index.js';
import type { FileEntry } from '../configured/configured-target.js';
import type { RuleContext } from '../configured/rule-context.js';
import { targetNameOf } from '../configured/target-paths.js';

/**
 * The test an analysis test rule (`rule(analysis_test = True)`) stands for, as Bazel's
 * AnalysisTestActionBuilder writes it: an executable script named after the target that echoes
 * the AnalysisTestResultInfo's message, each character backslash-escaped (so the shell prints it
 * as written), and exits 0 on success, 1 on failure.
 */
export function analysisTestScript(rc: RuleContext, providers: ReadonlyMap<string, ProviderInstance>): { file: FileEntry; action: Action } {
  const info = providers.get(ANALYSIS_TEST_RESULT_INFO.key);
  if (!info) throw rc.error(undefined, 'rules with analysis_test=true must return an instance of AnalysisTestResultInfo');
  const success = info.field('success') === true;
  const message = info.field('message') as string;
  const escaped = message.replace(/(.)/g, '\\$1');
  const content = `${escaped
    .split('\n')
    .map((line) => `echo ${line}\n`)
    .join('')}exit ${success ? '0' : '1'}`;
  const file = rc.outputFile(targetNameOf(rc.target.label), true);
  const action = inProcessAction({
    owner: rc.target.label,
    location: rc.target.location,
    mnemonic: 'FileWrite',
    progressMessage: `Writing file ${file.rootPath}`,
    output: file.artifact as DerivedArtifact,
    work: { kind: 'write', content },
    executable: true,
  });
  return { file, action };
}
