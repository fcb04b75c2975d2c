/** A packaged rule set: where its package installs it, and the WORKSPACE it is queried with (its own when absent). */
export interface RuleSet {
  readonly source: string;
  readonly workspace?: string;
}

export declare const RULE_SETS: Readonly<Record<'platforms' | 'rules_java' | 'rules_cc' | 'rules_proto', RuleSet>>;

/** Copies rule set `name` into `dest` (new or empty), writable, with its WORKSPACE; throws when its package is missing. */
export declare function setUpRuleSet(name: keyof typeof RULE_SETS, dest: string): void;
