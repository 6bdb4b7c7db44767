import { CLOCK_ANCHOR_ENV, clockAnchorEnv } from '../../clock/clock.js';
import { CONTROL_TOKEN_ENV, runControlToken } from '../../routing/router/control-auth.js';

/**
 * The environment servelab's child processes get: servelab's own, less the variables that hold secrets no child
 * needs. The API key (the variable `apiKeyEnv` names, `OPENAI_API_KEY` by default) is read by the load generator only,
 * in this process; servers, routers, taps and nginx never need it, so it is never handed to them (a child's
 * environment can be read by any process of the same user, and ends up in crash reports).
 */
const withheld = new Set<string>(['OPENAI_API_KEY']);

/** Adds a variable to those withheld from every child started from now on (the run's `apiKeyEnv`). */
export function withholdFromChildren(name: string): void {
  withheld.add(name);
}

/**
 * `process.env` without the withheld variables, plus the run's control token (so the servelab processes it launches
 * trust its requests to their `/_servelab/` endpoints: control-auth.ts), plus this host's clock anchor (so the
 * servelab processes it launches here stamp times on exactly its epoch: clock.ts), plus `extra` (which may name
 * servelab's own private variables).
 */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!withheld.has(name)) env[name] = value;
  return { ...env, [CONTROL_TOKEN_ENV]: runControlToken(), ...clockAnchorEnv(), ...extra };
}

/**
 * childEnv for a process started on another host (a Slurm step): without the clock anchor, which holds only on this
 * host. A node of the allocation may be this very host, but the anchor's boot-id check cannot tell a real second host
 * from a test cluster's emulated one, whose wall clock is shifted over the same monotonic clock (faketime with
 * FAKETIME_DONT_FAKE_MONOTONIC); such processes measure their own anchor, and the load generators among them are
 * measured against this process by clock exchanges (generator-clock.ts).
 */
export function remoteChildEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = childEnv(extra);
  delete env[CLOCK_ANCHOR_ENV];
  return env;
}
