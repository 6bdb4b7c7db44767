import { describe, expect, it } from 'vitest';
import { localPlacement } from '../../src/cluster/placement/local/local-placement.js';
import { resolveRoutingTestConfig } from '../../src/config/routing-test-config.js';
import { isServelabError, ServelabError } from '../../src/errors/servelab-error.js';
import { launchCluster } from '../../src/orchestration/launch-cluster.js';
import { roundRobinNodes, type TargetLaunchContext, type TargetLauncher } from '../../src/orchestration/launch-targets/target-launcher.js';
import type { ServerHandle } from '../../src/types/cluster.js';

/**
 * A target of hand-made launches, as a site's own launcher would be: node 0 does what `first` says, node 1 is up at
 * once, and every other node starts only when its signal aborts (a start that would otherwise never end).
 */
function target(first: 'fail' | 'hang', log: string[]): TargetLauncher {
  const up = (index: number): ServerHandle => ({
    name: `node-${index}`,
    url: `http://127.0.0.1:${10_000 + index}`,
    stop: async () => void log.push(`stop node-${index}`),
  });
  return {
    name: 'hand-made',
    unmodelledColumns: [],
    serversReportOnThemselves: false,
    describeNodeStart: () => '',
    describeClusterStart: () => '',
    launchNode: () => Promise.reject(new Error('not used')),
    launchClusterNode(_config, index, { signal }) {
      if (index === 1) return Promise.resolve(up(index));
      if (index === 0 && first === 'fail') return Promise.reject(new ServelabError('NOT_READY', 'node-0 did not get ready'));
      return new Promise((_, reject) => {
        signal?.addEventListener('abort', () => {
          log.push(`aborted node-${index}`);
          reject(new ServelabError('INTERRUPTED', `interrupted while node-${index} was starting`));
        });
      });
    },
  };
}

function context(signal?: AbortSignal): TargetLaunchContext {
  return { placement: localPlacement, logsPath: '/nonexistent', serverNode: roundRobinNodes(undefined), ...(signal === undefined ? {} : { signal }) };
}

describe('launchCluster', () => {
  it('on the first failed start aborts the launches still pending and stops those up, then passes the failure on', async () => {
    const log: string[] = [];
    const error = await launchCluster(target('fail', log), resolveRoutingTestConfig({ numGpus: 4 }), context()).catch((caught: unknown) => caught);
    expect(isServelabError(error) && error.code).toBe('NOT_READY');
    expect(log.sort()).toEqual(['aborted node-2', 'aborted node-3', 'stop node-1']);
  });

  it('on an abort of its signal (Ctrl-C) aborts the pending launches, stops those up and rejects as INTERRUPTED', async () => {
    const log: string[] = [];
    const controller = new AbortController();
    const launching = launchCluster(target('hang', log), resolveRoutingTestConfig({ numGpus: 4 }), context(controller.signal)).catch((caught: unknown) => caught);
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    const error = await launching;
    expect(isServelabError(error) && error.code).toBe('INTERRUPTED');
    expect(log.sort()).toEqual(['aborted node-0', 'aborted node-2', 'aborted node-3', 'stop node-1']);
  });
});
