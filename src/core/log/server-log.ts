/**
 * What a server line may carry besides its message: the REAPI operation, the action digest
 * (`hash/size`) and the client's invocation id (RequestMetadata.tool_invocation_id), where the line
 * is about one, and any other plain value.
 */
export interface LogFields {
  readonly operation?: string;
  readonly actionDigest?: string;
  readonly invocationId?: string;
  readonly [key: string]: string | number | boolean | undefined;
}

/** Where a server role's logs go: pino lines on stderr (`createServerLog`), a buffer in tests. */
export interface ServerLog {
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
}

/** A role's own log (`createServerLog`): also errors, which a role reports only about itself. */
export interface ServerLogger extends ServerLog {
  error(message: string, fields?: LogFields): void;
}
