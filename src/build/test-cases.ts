import { readFileSync } from 'node:fs';
import { XMLParser } from 'fast-xml-parser';

/** One `<testcase>` of a test.xml, as Bazel's TestXmlOutputParser reads it. */
export interface TestCase {
  readonly className: string;
  readonly name: string;
  readonly status: 'PASSED' | 'FAILED' | 'ERROR' | 'SKIPPED';
  /** From the `time` attribute (seconds), when it has one. */
  readonly durationMs?: number;
}

/** The test cases of one test target: those of every run whose test.xml could be read. */
export interface TestCases {
  readonly cases: readonly TestCase[];
  /** Runs whose test.xml was missing or not JUnit XML (Bazel's unknown test cases: one per such run). */
  readonly unknownRuns: number;
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  // Elements that may repeat are always arrays, so one test case reads like many.
  isArray: (name) => name === 'testsuite' || name === 'testcase',
  processEntities: false,
});

/** Reads the test.xml files of a target's runs (their final attempts). */
export function readTestCases(xmlPaths: readonly string[]): TestCases {
  const cases: TestCase[] = [];
  let unknownRuns = 0;
  for (const path of xmlPaths) {
    let parsed: readonly TestCase[] | undefined;
    try {
      parsed = parseTestXml(readFileSync(path, 'utf8'));
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined) unknownRuns++;
    else cases.push(...parsed);
  }
  return { cases, unknownRuns };
}

/**
 * The test cases of a JUnit XML text (`<testsuites>` or a lone `<testsuite>`, suites nested in
 * suites): a `<failure>` child makes a case FAILED, an `<error>` ERROR, `<skipped>` or
 * `status="notrun"` SKIPPED. Undefined when the text is not such a document.
 */
export function parseTestXml(text: string): readonly TestCase[] | undefined {
  let doc: Record<string, unknown>;
  try {
    doc = parser.parse(text, true) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const roots = doc['testsuites'] !== undefined ? (asSuites(asObject(doc['testsuites'])?.['testsuite']) ?? []) : asSuites(doc['testsuite']);
  if (roots === undefined) return undefined;
  const out: TestCase[] = [];
  const visit = (suite: Record<string, unknown>): void => {
    for (const c of asList(suite['testcase'])) {
      const tc = asObject(c) ?? {};
      const seconds = Number(tc['time']);
      const status =
        tc['failure'] !== undefined
          ? 'FAILED'
          : tc['error'] !== undefined
            ? 'ERROR'
            : tc['skipped'] !== undefined || tc['status'] === 'notrun'
              ? 'SKIPPED'
              : 'PASSED';
      out.push({
        className: String(tc['classname'] ?? ''),
        name: String(tc['name'] ?? ''),
        status,
        ...(tc['time'] !== undefined && Number.isFinite(seconds) ? { durationMs: Math.round(seconds * 1000) } : {}),
      });
    }
    for (const nested of asSuites(suite['testsuite']) ?? []) visit(nested);
  };
  for (const suite of roots) visit(suite);
  return out;
}

function asObject(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : v === '' ? {} : undefined;
}

function asList(v: unknown): readonly unknown[] {
  return Array.isArray(v) ? v : v === undefined ? [] : [v];
}

function asSuites(v: unknown): Record<string, unknown>[] | undefined {
  if (v === undefined) return undefined;
  return asList(v).map((s) => asObject(s) ?? {});
}
