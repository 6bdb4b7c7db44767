import { readFileSync } from 'node:fs';
import { isPortFree } from '../../src/cluster/ports.js';

/**
 * The first port below the kernel's ephemeral range (Linux's ip_local_port_range; 32768 where it cannot be read).
 * A port handed out by a bind to port 0, or to an outgoing connection, comes from that range, so a run of ports chosen
 * below it is not taken between the check and the launch by another test running beside this one (a launcher given
 * --base-port from findFreePort had found "port already in use" on its third server in CI).
 */
function ephemeralLow(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    return low !== undefined && Number.isInteger(low) && low > 2048 ? low : 32768;
  } catch {
    return 32768;
  }
}

/** `length` consecutive ports free on 127.0.0.1 right now, below the ephemeral range, for a launcher's --base-port. */
export async function freePortRun(length: number): Promise<number> {
  const high = ephemeralLow() - length;
  const low = Math.min(20_000, high - 1000);
  for (let attempt = 0; attempt < 200; attempt++) {
    const first = low + Math.floor(Math.random() * (high - low));
    let free = true;
    for (let offset = 0; offset < length && free; offset++) free = await isPortFree(first + offset);
    if (free) return first;
  }
  throw new Error(`no run of ${length} free ports between ${low} and ${high + length} after 200 tries`);
}
