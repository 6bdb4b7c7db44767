import { ServelabError } from '../errors/servelab-error.js';
import type { ProtocolClient, ProtocolClientFactory, ProtocolClientOptions } from '../types/client.js';
import { importUserModule } from '../utils/import-user-module.js';
import { OpenAiChatClient } from './openai-chat/openai-chat-client.js';
import { OpenAiCompletionsClient } from './openai-completions/openai-completions-client.js';
import { SglangNativeClient } from './sglang-native/sglang-native-client.js';

/** The built-in protocol clients by name (the `protocol` setting). */
export const protocolClients = {
  sglang: (options) => new SglangNativeClient(options),
  'openai-completions': (options) => new OpenAiCompletionsClient(options),
  'openai-chat': (options) => new OpenAiChatClient(options),
} as const satisfies Record<string, ProtocolClientFactory>;

export type ProtocolName = keyof typeof protocolClients;

export function isProtocolName(name: string): name is ProtocolName {
  return Object.prototype.hasOwnProperty.call(protocolClients, name);
}

/** Creates the client for a protocol name; an unknown name is a configuration error that lists the known ones. */
export function createProtocolClient(name: string, options: ProtocolClientOptions): ProtocolClient {
  if (!isProtocolName(name)) {
    throw new ServelabError(
      'INVALID_CONFIG',
      `unknown protocol "${name}"; use one of: ${Object.keys(protocolClients).join(', ')}`,
    );
  }
  return protocolClients[name](options);
}

/**
 * Like `createProtocolClient`, but a name that is not built in is loaded as a module path (absolute, or relative to
 * the working directory) whose default export, or export `createProtocolClient`, is a `ProtocolClientFactory`.
 */
export async function loadProtocolClient(name: string, options: ProtocolClientOptions): Promise<ProtocolClient> {
  if (isProtocolName(name)) return protocolClients[name](options);
  const loaded = await importUserModule(
    name,
    (detail) => `protocol "${name}" is neither built in (${Object.keys(protocolClients).join(', ')}) nor a module that loads: ${detail}`,
  );
  const factory = loaded['default'] ?? loaded['createProtocolClient'];
  if (typeof factory !== 'function') {
    throw new ServelabError(
      'MODULE_LOAD_FAILED',
      `module "${name}" loaded but exports no protocol client factory; export default (options) => client`,
    );
  }
  return (factory as ProtocolClientFactory)(options);
}
