/**
 * A proxy under test for bench/router-overhead.ts, run in its own process:
 *   router-overhead-proxy.js router <policy> <upstream URL...>   servelab's builtin router
 *   router-overhead-proxy.js taps <upstream URL>                   one tracing tap
 * Prints `URL http://...` when it listens (for taps, also `OVERHEAD <json>` on SIGUSR2).
 */
import { systemClock } from '../src/clock/clock.js';
import { loadRoutingPolicy } from '../src/routing/policies/registry.js';
import { startRouter } from '../src/routing/router/index.js';
import { startTaps } from '../src/routing/tap/index.js';

const [mode, ...rest] = process.argv.slice(2);
if (mode === 'router') {
  const [policyName, ...workerUrls] = rest;
  const router = await startRouter({ workerUrls, policy: await loadRoutingPolicy(policyName ?? 'round_robin', { seed: 1 }) });
  process.stdout.write(`URL ${router.url}\n`);
  process.on('SIGTERM', () => void router.close().then(() => process.exit(0)));
} else if (mode === 'taps') {
  const taps = await startTaps({ upstreamUrls: rest, clock: systemClock });
  process.stdout.write(`URL ${taps.tapUrls[0]}\n`);
  process.on('SIGUSR2', () => process.stdout.write(`OVERHEAD ${JSON.stringify(taps.overhead())}\n`));
  process.on('SIGTERM', () => void taps.close().then(() => process.exit(0)));
} else {
  process.stderr.write('usage: router-overhead-proxy.js router <policy> <url...> | taps <url>\n');
  process.exit(2);
}
