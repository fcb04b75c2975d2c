import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { ActionRecord } from './action-records.js';

/** A phase of the command, as Bazel's ProfilePhase describes it (the profile's `build phase marker`s). */
export type ProfilePhase =
  | 'Launch Blaze'
  | 'Initialize command'
  | 'Evaluate target patterns'
  | 'Load and analyze dependencies'
  | 'Prepare for build'
  | 'Build artifacts'
  | 'Complete build';

/** One Chrome trace event (the Trace Event Format Bazel's JsonTraceFileWriter writes). */
export interface TraceEvent {
  readonly name: string;
  readonly ph: 'X' | 'i' | 'M' | 'C';
  readonly pid: number;
  readonly tid: number;
  readonly cat?: string;
  /** Microseconds since the profile's start. */
  readonly ts?: number;
  readonly dur?: number;
  /** An action's primary output. */
  readonly out?: string;
  readonly args?: Readonly<Record<string, unknown>>;
}

/** The whole file: `otherData` (build id, output base, date) and the events. */
export interface TraceProfile {
  readonly otherData: Readonly<Record<string, string>>;
  readonly traceEvents: readonly TraceEvent[];
}

const PID = 1;
/** Thread 0 holds the critical path, as in Bazel's profile; the command's own work is on thread 1; actions from 2 on. */
const CRITICAL_PATH_TID = 0;
const MAIN_TID = 1;

/**
 * The JSON trace profile of one command (`--profile`, or `command.profile.gz` in the output base),
 * as present-day Bazel writes it: thread names, the phase markers (instant events), the command's
 * phases as complete events, one `action processing` span per executed action on the lane of the
 * job that ran it (with `out`, the primary output, and `args.target` and `args.mnemonic`), and the
 * critical path's components on their own thread. Loads in Perfetto and chrome://tracing, and in
 * `bazel analyze-profile`.
 */
export class TraceProfileRecorder {
  private readonly phases: { phase: ProfilePhase; atMs: number }[] = [];

  constructor(
    private readonly startMs: number,
    private readonly facts: { readonly buildId: string; readonly outputBase: string },
  ) {}

  /** The command entered `phase` (now, or at `atMs`). */
  phase(phase: ProfilePhase, atMs: number = Date.now()): void {
    this.phases.push({ phase, atMs });
  }

  /** The profile of the command so far, given the actions that ran. */
  profile(actions: readonly ActionRecord[], endMs: number): TraceProfile {
    const us = (ms: number) => Math.max(0, Math.round((ms - this.startMs) * 1000));
    const events: TraceEvent[] = [
      { name: 'thread_name', ph: 'M', pid: PID, tid: CRITICAL_PATH_TID, args: { name: 'Critical Path' } },
      { name: 'thread_sort_index', ph: 'M', pid: PID, tid: CRITICAL_PATH_TID, args: { sort_index: 0 } },
      { name: 'thread_name', ph: 'M', pid: PID, tid: MAIN_TID, args: { name: 'Main Thread' } },
      { name: 'thread_sort_index', ph: 'M', pid: PID, tid: MAIN_TID, args: { sort_index: 1 } },
    ];
    this.phases.forEach(({ phase, atMs }, i) => {
      events.push({ cat: 'build phase marker', name: phase, ph: 'i', ts: us(atMs), pid: PID, tid: MAIN_TID });
      const next = this.phases[i + 1]?.atMs ?? endMs;
      events.push({ cat: 'build phase marker', name: phase, ph: 'X', ts: us(atMs), dur: us(next) - us(atMs), pid: PID, tid: MAIN_TID });
    });
    const lanes = assignLanes(actions);
    const laneCount = Math.max(0, ...lanes) + 1;
    for (let lane = 0; lane < laneCount && actions.length > 0; lane++) {
      const tid = MAIN_TID + 1 + lane;
      events.push({ name: 'thread_name', ph: 'M', pid: PID, tid, args: { name: `skyframe-evaluator-execution-${lane}` } });
      events.push({ name: 'thread_sort_index', ph: 'M', pid: PID, tid, args: { sort_index: tid } });
    }
    actions.forEach((r, i) => {
      events.push({
        cat: 'action processing',
        name: r.action.progressMessage,
        ph: 'X',
        ts: us(r.startMs),
        dur: Math.max(1, us(r.endMs) - us(r.startMs)),
        pid: PID,
        tid: MAIN_TID + 1 + lanes[i]!,
        out: r.action.outputs[0]!.execPath,
        args: { target: r.action.owner, mnemonic: r.action.mnemonic, runner: r.runner },
      });
    });
    for (const r of criticalPath(actions)) {
      events.push({
        cat: 'critical path component',
        name: `action '${r.action.progressMessage}'`,
        ph: 'X',
        ts: us(r.startMs),
        dur: Math.max(1, us(r.endMs) - us(r.startMs)),
        pid: PID,
        tid: CRITICAL_PATH_TID,
        args: { target: r.action.owner, mnemonic: r.action.mnemonic },
      });
    }
    return {
      otherData: {
        build_id: this.facts.buildId,
        output_base: this.facts.outputBase,
        date: javaDate(new Date(this.startMs)),
        profile_finish_ts: String(us(endMs)),
      },
      traceEvents: events,
    };
  }
}

/** Writes the profile, gzipped when the file name ends with `.gz` (as Bazel decides). */
export function writeTraceProfile(path: string, profile: TraceProfile): void {
  const json = `{"otherData":${JSON.stringify(profile.otherData)},"traceEvents":[\n${profile.traceEvents.map((e) => `  ${JSON.stringify(e)}`).join(',\n')}\n]}\n`;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, path.endsWith('.gz') ? gzipSync(json) : json);
}

/** For each action, the lowest lane free when it started: overlapping actions get different threads, as jobs do. */
function assignLanes(actions: readonly ActionRecord[]): number[] {
  const order = actions.map((_r, i) => i).sort((a, b) => actions[a]!.startMs - actions[b]!.startMs);
  const busyUntil: number[] = [];
  const lanes = new Array<number>(actions.length).fill(0);
  for (const i of order) {
    const r = actions[i]!;
    let lane = busyUntil.findIndex((until) => until <= r.startMs);
    if (lane < 0) lane = busyUntil.length;
    busyUntil[lane] = r.endMs;
    lanes[i] = lane;
  }
  return lanes;
}

/**
 * The longest chain of actions by the time they took, each reading an output of the one before
 * (Bazel's CriticalPathComputer over the actions that ran), first action first.
 */
export function criticalPath(actions: readonly ActionRecord[]): ActionRecord[] {
  const producer = new Map<string, ActionRecord>();
  for (const r of actions) for (const o of r.action.outputs) producer.set(o.execPath, r);
  const best = new Map<ActionRecord, { total: number; previous: ActionRecord | undefined }>();
  const visit = (r: ActionRecord, seen: Set<ActionRecord>): number => {
    const known = best.get(r);
    if (known) return known.total;
    seen.add(r);
    let previous: ActionRecord | undefined;
    let longest = 0;
    for (const input of r.action.inputs) {
      const p = producer.get(input.execPath);
      if (!p || p === r || seen.has(p)) continue;
      const total = visit(p, seen);
      if (total > longest) {
        longest = total;
        previous = p;
      }
    }
    const total = longest + (r.endMs - r.startMs);
    best.set(r, { total, previous });
    return total;
  };
  let last: ActionRecord | undefined;
  for (const r of actions) {
    const total = visit(r, new Set());
    if (!last || total > best.get(last)!.total) last = r;
  }
  const path: ActionRecord[] = [];
  for (let r = last; r; r = best.get(r)!.previous) path.unshift(r);
  return path;
}

/** A date as Java's Date.toString prints it in UTC (Bazel's `otherData.date`): `Fri Dec 04 19:00:17 UTC 2026`. */
function javaDate(d: Date): string {
  const [weekday, day, month, year, time] = d.toUTCString().replace(',', '').split(' ');
  return `${weekday} ${month} ${day} ${time} UTC ${year}`;
}
