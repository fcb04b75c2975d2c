import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { InProcessWork } from '../actions/index.js';

/**
 * The content an in-process action gives its output: the written text, the template with its
 * substitutions applied (each in order, over the whole text, as Bazel's TemplateExpansionAction),
 * or the bytes of the file a symlink would point to. Files read are the action's inputs, by exec
 * path under the execroot.
 */
export async function inProcessContent(work: InProcessWork, execRoot: string): Promise<Buffer> {
  switch (work.kind) {
    case 'write':
      return Buffer.from(work.content, 'utf8');
    case 'write_binary':
      return Buffer.from(work.base64, 'base64');
    case 'expand_template': {
      let text = await readFile(join(execRoot, work.template), 'utf8');
      for (const [key, value] of work.substitutions) text = text.split(key).join(value);
      return Buffer.from(text, 'utf8');
    }
    case 'symlink':
      return readFile(join(execRoot, work.target));
  }
}
