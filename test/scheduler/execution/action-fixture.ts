import { digestOf, encodeMessage, reapi, type Digest, type MessageCodec } from '../../../src/core/index.js';
import { MemoryBlobAccess } from '../../../src/core/blobstore/index.js';

/** A CAS in memory plus helpers to store Actions, Commands and Directories in it. */
export class ActionFixture {
  readonly cas = new MemoryBlobAccess({ maxBytes: 64 * 1024 * 1024 });

  async put(data: Buffer | string): Promise<Digest> {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    const digest = digestOf(bytes);
    await this.cas.put(digest, bytes);
    return digest;
  }

  async putMessage<T, I>(codec: MessageCodec<T, I>, message: I): Promise<Digest> {
    const { digest, data } = encodeMessage(codec, message);
    await this.cas.put(digest, data);
    return digest;
  }

  /** Stores a Command, an input root and the Action; returns the action's digest. */
  async action(
    options: {
      args?: string[];
      platform?: { name: string; value: string }[];
      inputRoot?: reapi.DirectoryInit;
      timeoutSeconds?: number;
      doNotCache?: boolean;
      salt?: string;
      store?: { command?: boolean; action?: boolean };
      /** Fields of the Command that replace the defaults. */
      command?: Partial<reapi.CommandInit>;
    } = {},
  ): Promise<Digest> {
    const command: reapi.CommandInit = { arguments: options.args ?? ['/bin/true'], outputPaths: ['out'], ...options.command };
    if (options.platform) command.platform = { properties: options.platform };
    const commandBytes = reapi.Command.encode(command);
    const commandDigest = digestOf(commandBytes);
    if (options.store?.command !== false) await this.cas.put(commandDigest, commandBytes);
    const rootBytes = reapi.Directory.encode(options.inputRoot ?? {});
    const inputRootDigest = digestOf(rootBytes);
    await this.cas.put(inputRootDigest, rootBytes);
    const action: reapi.ActionInit = { commandDigest, inputRootDigest, doNotCache: options.doNotCache ?? false };
    if (options.timeoutSeconds !== undefined) action.timeout = { seconds: options.timeoutSeconds };
    if (options.salt) action.salt = Buffer.from(options.salt);
    const actionBytes = reapi.Action.encode(action);
    const digest = digestOf(actionBytes);
    if (options.store?.action !== false) await this.cas.put(digest, actionBytes);
    return digest;
  }
}
