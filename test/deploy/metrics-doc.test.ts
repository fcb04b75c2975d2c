import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { everyMetric, renderMetricsDoc } from '../../scripts/metrics-doc.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

describe('deploy/metrics.md', () => {
  it('is up to date with the registered metrics (regenerate: node scripts/gen-metrics-doc.mjs)', () => {
    expect(readFileSync(join(ROOT, 'deploy/metrics.md'), 'utf8')).toBe(renderMetricsDoc());
  });

  it('lists every metric, each named kiln_ and with help', () => {
    const names = (everyMetric().getMetricsAsArray() as unknown as { name: string; help: string }[]).map((m) => m.name);
    const doc = renderMetricsDoc();
    for (const name of names) {
      expect(name).toMatch(/^kiln_/);
      expect(doc).toContain(`| \`${name}\` |`);
    }
    for (const required of [
      'kiln_blobstore_operations_duration_seconds',
      'kiln_scheduler_queued_actions',
      'kiln_scheduler_oldest_queued_action_age_seconds',
      'kiln_scheduler_actions_total',
      'kiln_scheduler_workers',
      'kiln_grpc_server_handled_total',
      'kiln_executor_actions_in_flight',
    ]) {
      expect(names).toContain(required);
    }
  });
});
