import { resolveRoutingTestConfig } from '../config/routing-test-config.js';
import type { RoutingTestConfig, RoutingTestConfigInput } from '../config/schema.js';
import { measureRoutingTest } from '../orchestration/measure-routing-test.js';
import { checkRoutingPolicyName } from '../routing/policies/registry.js';
import { MeasuredTest } from './measured-test.js';

/**
 * A routing test: one router in front of N servers (README.md). `run()` launches the servers, the tracing taps and the
 * router (or simulates them in virtual time), offers the load at the total rate, and writes the run directory.
 */
export class RoutingTest extends MeasuredTest<RoutingTestConfig> {
  /** Validates the configuration at once: a bad setting throws INVALID_CONFIG naming it, before anything starts. */
  constructor(config: RoutingTestConfigInput | Record<string, unknown> = {}) {
    super(resolveRoutingTestConfig(config), 'routing', measureRoutingTest, config as Record<string, unknown>);
    // The builtin router's policy is checked here, before anything starts (the config layer cannot see the registry).
    if (this.config.router === 'builtin') {
      checkRoutingPolicyName(this.config.routingPolicy);
      // PD mode: the prefill and decode policies too (launch-router.ts hands them to the router).
      for (const name of [this.config.prefillPolicy, this.config.decodePolicy]) if (name !== undefined) checkRoutingPolicyName(name);
    }
  }
}
