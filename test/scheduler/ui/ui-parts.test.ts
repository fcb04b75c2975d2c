import { describe, expect, it } from 'vitest';
import { buildEventStream } from '../../../src/core/index.js';
import { escapeHtml, html, trusted } from '../../../scheduler/ui/html.js';
import { bytestreamBlob, InvocationReports, invocationReport } from '../../../scheduler/ui/invocation-report.js';
import { parseDigestQuery } from '../../../scheduler/ui/pages/search-page.js';
import { localPath } from '../../../scheduler/ui/pages/login-page.js';
import { blobUrl, operationUrl } from '../../../scheduler/ui/ui-links.js';
import { parseUiPath } from '../../../scheduler/ui/ui-path.js';

const HASH = 'a'.repeat(64);

describe('html templates', () => {
  it('escapes every interpolated string, in text and attributes, and nests markup as it is', () => {
    const name = `<script>"x" & 'y'</script>`;
    expect(escapeHtml(name)).toBe('&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;');
    const inner = html`<b>${name}</b>`;
    expect(html`<a title="${name}">${inner}${[name, 3]}${undefined}${null}${false}</a>`.text).toBe(
      `<a title="${escapeHtml(name)}"><b>${escapeHtml(name)}</b>${escapeHtml(name)}3</a>`,
    );
    expect(html`${trusted('<i>ok</i>')}`.text).toBe('<i>ok</i>');
  });
});

describe('paths of the UI', () => {
  it('reads blob paths as resource names: the instance is everything before "blobs"', () => {
    expect(parseUiPath(`/blobs/${HASH}/12/action/`)).toEqual({
      kind: 'blob',
      instanceName: '',
      digest: { hash: HASH, sizeBytes: 12 },
      view: 'action',
      rest: [],
    });
    expect(parseUiPath(`/team/a/blobs/${HASH}/3/tree/sub/dir/`)).toMatchObject({ instanceName: 'team/a', view: 'tree', rest: ['sub', 'dir'] });
    expect(parseUiPath(`/blobs/${HASH}/3/file/a%2Fb%20c.txt`)).toMatchObject({ view: 'file', rest: ['a/b c.txt'] });
    expect(parseUiPath('/x/operations/1234')).toEqual({ kind: 'operation', name: 'x/operations/1234' });
    expect(parseUiPath('/invocation/abc')).toEqual({ kind: 'page', segments: ['invocation', 'abc'] });
    expect(parseUiPath('/')).toEqual({ kind: 'page', segments: [] });
  });

  it('refuses malformed blob paths with a message naming what is wrong', () => {
    expect(() => parseUiPath(`/blobs/xyz/3/action/`)).toThrow(/path/);
    expect(() => parseUiPath(`/blobs/${HASH}/-1/action/`)).toThrow(/size must be a decimal number/);
    expect(() => parseUiPath(`/blobs/${HASH}/3/bogus/`)).toThrow(/expected one of action, command, directory, tree, file/);
    expect(() => parseUiPath('/%E0%A4%A')).toThrow(/percent-encoding/);
  });

  it('builds the URLs it reads back', () => {
    const digest = { hash: HASH, sizeBytes: 9 };
    for (const [instance, view, rest] of [
      ['', 'action', []],
      ['a/b c', 'tree', ['x', 'y?z']],
      ['i', 'file', ['name#1.txt']],
    ] as const) {
      expect(parseUiPath(blobUrl(instance, digest, view, rest))).toEqual({ kind: 'blob', instanceName: instance, digest, view, rest });
    }
    expect(parseUiPath(operationUrl('a b/operations/42'))).toEqual({ kind: 'operation', name: 'a b/operations/42' });
  });

  it('only goes back to pages of this site after signing in', () => {
    expect(localPath('/queue?x=1')).toBe('/queue?x=1');
    for (const next of ['//evil.example/', 'https://evil.example/', '/\\evil.example', '', null]) expect(localPath(next)).toBe('/');
  });
});

describe('digests as users and Bazel give them', () => {
  it('searches by hash, hash/size, hash-size or a URL that holds them', () => {
    expect(parseDigestQuery(HASH.toUpperCase())).toEqual({ hash: HASH });
    expect(parseDigestQuery(` ${HASH}/140 `)).toEqual({ hash: HASH, sizeBytes: 140 });
    expect(parseDigestQuery(`${HASH}-140`)).toEqual({ hash: HASH, sizeBytes: 140 });
    expect(parseDigestQuery(`http://h:1/blobs/${HASH}/7/action/`)).toEqual({ hash: HASH, sizeBytes: 7 });
    expect(parseDigestQuery('abc')).toBeUndefined();
  });

  it("reads the bytestream:// URIs of Bazel's uploaded test logs", () => {
    expect(bytestreamBlob(`bytestream://127.0.0.1:4000/blobs/${HASH}/12`)).toEqual({ instanceName: '', hash: HASH, sizeBytes: 12 });
    expect(bytestreamBlob(`bytestream://host/main/x/blobs/${HASH}/0`)).toEqual({ instanceName: 'main/x', hash: HASH, sizeBytes: 0 });
    expect(bytestreamBlob('file:///tmp/test.log')).toBeUndefined();
  });
});

describe('invocation reports', () => {
  const event = (init: buildEventStream.BuildEventInit) => buildEventStream.BuildEvent.decode(buildEventStream.BuildEvent.encode(init));
  const events = [
    event({
      structuredCommandLine: {
        commandLineLabel: 'original',
        sections: [{ chunkList: { chunk: ['bazel', 'test'] } }, { optionList: { option: [{ combinedForm: '--x=1' }] } }],
      },
    }),
    event({ optionsParsed: { explicitCmdLine: ['--x=1'], cmdLine: ['--x=1', '--y'] } }),
    event({
      id: { testResult: { label: '//:t', run: 1, shard: 1, attempt: 1 } },
      testResult: { status: buildEventStream.TestStatus.PASSED, testAttemptDurationMillis: 12, testActionOutput: [{ name: 'test.log', uri: 'file:///x' }] },
    }),
  ];

  it('reads the command line, options and test attempts, and reads only new events on each look', () => {
    const reports = new InvocationReports();
    const asked: number[] = [];
    const first = reports.reportOf('i', 2, (offset) => (asked.push(offset), events.slice(offset, 2)));
    expect(first).toEqual({ commandLine: ['bazel', 'test', '--x=1'], explicitOptions: ['--x=1'], allOptions: ['--x=1', '--y'], tests: [] });
    const second = reports.reportOf('i', 3, (offset) => (asked.push(offset), events.slice(offset)));
    expect(second.tests).toEqual([
      {
        label: '//:t',
        run: 1,
        shard: 1,
        attempt: 1,
        status: 'PASSED',
        durationMs: 12,
        cachedLocally: false,
        strategy: '',
        outputs: [{ name: 'test.log', uri: 'file:///x' }],
      },
    ]);
    expect(asked).toEqual([0, 2]);
    expect(second).toEqual(invocationReport(events));
  });
});
