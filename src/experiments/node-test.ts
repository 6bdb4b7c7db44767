import { resolveNodeTestConfig } from '../config/node-test-config.js';
import type { NodeTestConfig, NodeTestConfigInput } from '../config/schema.js';
import { measureNodeTest } from '../orchestration/measure-node-test.js';
import { MeasuredTest } from './measured-test.js';

/**
 * A node test: one server, requests sent straight to it (README.md). `run()` launches the target (or simulates it in
 * virtual time), offers the load, records every request's lifecycle, and writes the run directory.
 */
export class NodeTest extends MeasuredTest<NodeTestConfig> {
  /** Validates the configuration at once: a bad setting throws INVALID_CONFIG naming it, before anything starts. */
  constructor(config: NodeTestConfigInput | Record<string, unknown> = {}) {
    super(resolveNodeTestConfig(config), 'node', measureNodeTest, config as Record<string, unknown>);
  }
}
