import type { EngineProfile } from '../../types/engine.js';
import { DEFAULT_NUM_RESERVED_DECODE_TOKENS } from './decode-prealloc.js';
import { KV_TRANSFER_DEFAULTS } from './kv-transfer-link.js';
import { DEFAULT_BOOTSTRAP_TIMEOUT_MS, DEFAULT_KV_WAITING_TIMEOUT_MS } from './pd-timeouts.js';
import type { KvTransferLinkSettings } from './kv-transfer-link.js';

/**
 * KV bytes per token when neither the profile nor a setting gives one: Llama-3-8B in bf16 (2 x 32 layers x 8 KV heads x
 * 128 x 2 bytes = 128 KiB), the model of the built-in default profile. An assumption, stated where it is used.
 */
export const DEFAULT_KV_BYTES_PER_TOKEN = 131_072;

/** What a PD server's half needs beyond the engine: the link its KV crosses, the KV size, the decode reservation. */
export interface PdSettings {
  link: KvTransferLinkSettings;
  kvBytesPerToken: number;
  numReservedDecodeTokens: number;
  /** Decode server: how long a preallocated request waits for its KV before it fails (SGLang's waiting timeout). */
  kvWaitingTimeoutMs: number;
  /** Prefill server: how long a request waits for its decode server's destination before it fails (SGLang's bootstrap timeout). */
  bootstrapTimeoutMs: number;
}

/** The PD settings a server gives (flags), each overriding the profile's figure; the profile's, then the defaults, fill the rest. */
export interface PdSettingsInput {
  kvTransferBandwidthBytesPerSecond?: number;
  kvTransferLatencyMs?: number;
  kvBytesPerToken?: number;
  numReservedDecodeTokens?: number;
  kvWaitingTimeoutMs?: number;
  bootstrapTimeoutMs?: number;
}

export function resolvePdSettings(profile: EngineProfile, input: PdSettingsInput = {}): PdSettings {
  const profileLink = profile.kvTransfer;
  const profileBytes = profile.kvBytesPerToken;
  return {
    link: {
      bandwidthBytesPerSecond: input.kvTransferBandwidthBytesPerSecond ?? profileLink?.bandwidthBytesPerSecond ?? KV_TRANSFER_DEFAULTS.bandwidthBytesPerSecond,
      latencyMs: input.kvTransferLatencyMs ?? profileLink?.latencyMs ?? KV_TRANSFER_DEFAULTS.latencyMs,
    },
    kvBytesPerToken: input.kvBytesPerToken ?? profileBytes ?? DEFAULT_KV_BYTES_PER_TOKEN,
    numReservedDecodeTokens: input.numReservedDecodeTokens ?? DEFAULT_NUM_RESERVED_DECODE_TOKENS,
    kvWaitingTimeoutMs: input.kvWaitingTimeoutMs ?? DEFAULT_KV_WAITING_TIMEOUT_MS,
    bootstrapTimeoutMs: input.bootstrapTimeoutMs ?? DEFAULT_BOOTSTRAP_TIMEOUT_MS,
  };
}
