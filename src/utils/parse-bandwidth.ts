import { ServelabError } from '../errors/servelab-error.js';

/** Bytes per second of each unit: decimal prefixes as network and storage figures use them, binary ones spelled out. */
const UNITS: Record<string, number> = {
  'b/s': 1, 'kb/s': 1e3, 'mb/s': 1e6, 'gb/s': 1e9, 'tb/s': 1e12,
  'kib/s': 1024, 'mib/s': 1024 ** 2, 'gib/s': 1024 ** 3, 'tib/s': 1024 ** 4,
  'bit/s': 1 / 8, 'kbit/s': 1e3 / 8, 'mbit/s': 1e6 / 8, 'gbit/s': 1e9 / 8, 'tbit/s': 1e12 / 8,
  'kbps': 1e3 / 8, 'mbps': 1e6 / 8, 'gbps': 1e9 / 8, 'tbps': 1e12 / 8,
};

/**
 * A KV transfer bandwidth as people write it: `25GB/s` (bytes) or `200Gbit/s` / `200Gbps` (bits: a NIC's figure), a
 * number and a unit, case-insensitive for the prefix. `B` is bytes and `bit`/`bps` bits; `Gb/s` is refused as
 * ambiguous (people write it for both). Returns bytes per second.
 */
export function parseBandwidth(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?(?:e\d+)?)\s*([a-zA-Z/]+)\s*$/.exec(text);
  const fix = 'write it as e.g. 25GB/s (bytes) or 200Gbit/s (bits)';
  if (match === null) throw new ServelabError('INVALID_CONFIG', `KV transfer bandwidth "${text}" is not a number and a unit: ${fix}`);
  const value = Number(match[1]);
  const unitText = match[2] as string;
  // The case of `b` carries the meaning (B bytes, b bits): only the prefix letter is case-free.
  const bitsShorthand = /^[kmgtKMGT]?b\/s$/.test(unitText);
  if (bitsShorthand) throw new ServelabError('INVALID_CONFIG', `KV transfer bandwidth "${text}": "${unitText}" could mean bits or bytes: ${fix}`);
  const unit = unitText.toLowerCase();
  const perUnit = UNITS[unit];
  if (perUnit === undefined || !(value > 0)) throw new ServelabError('INVALID_CONFIG', `KV transfer bandwidth "${text}" is not a positive rate in a known unit: ${fix}`);
  return value * perUnit;
}
