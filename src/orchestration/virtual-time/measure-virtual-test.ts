import type { Clock } from '../../clock/clock.js';
import type { NodeTestConfig, RoutingTestConfig } from '../../config/schema.js';
import { loadProfile } from '../../engine/profile/load-profile.js';
import { describeRegionReport } from '../../engine/profile/region-watch.js';
import type { RegionReport } from '../../engine/profile/region-watch.js';
import { schedulingContradictionNotice } from '../../engine/profile/scheduling-notice.js';
import type { TestLevel } from '../../types/run.js';
import { buildWorkload, targetRateOf } from '../build-workload.js';
import type { PlannedWorkload } from '../build-workload.js';
import type { MeasuredRun } from '../measured-run.js';
import type { RunProgress } from '../progress.js';
import { createRunDirectory } from '../run-directory.js';
import { bandMetricsOf, sensitivityBand, skippedBand, stepErrorFor, stepErrorPercentText } from './twin-sensitivity.js';
import type { TwinSensitivity } from './twin-sensitivity.js';
import { runVirtualTime } from './virtual-time-run.js';

type VirtualTestConfig = NodeTestConfig &
  Partial<Pick<RoutingTestConfig, 'numGpus' | 'routingPolicy' | 'pdDisaggregation' | 'numPrefill' | 'numDecode' | 'prefillPolicy' | 'decodePolicy' | 'kvTransferBandwidth' | 'kvTransferLatencyMs'>>;

/**
 * A node or routing test in virtual time: the same workload, engines and policies as in real time, the same files,
 * marked `"simulated": true`. No process is launched.
 */
export async function measureVirtualTest(config: VirtualTestConfig, testLevel: TestLevel, clock: Clock, onProgress?: (progress: RunProgress) => void): Promise<MeasuredRun> {
  const startedMs = clock.nowMs();
  // Warmup requests have no purpose in virtual time (there is nothing to warm up), so none are sent; they are still
  // drawn, because a generated dataset draws its warmups as extra requests (every input length, then every output
  // length): drawn without them, the measured requests' output lengths came two places early against a real run with
  // --warmup-requests 2 on the same seed, and the twin ran another workload than the server it was compared with.
  const planned = await buildWorkload(config);
  // A closed loop of N users with no think time is, in virtual time, every request arriving at once under a cap of N.
  const workload = config.concurrency === undefined ? planned : { ...planned, arrivalOffsetsMs: new Float64Array(planned.requests.length) };
  const directory = await createRunDirectory({ outputDir: config.outputDir, resultsRoot: config.resultsRoot, runId: config.runId, testLevel });
  const total = workload.requests.length;
  const report = (phase: RunProgress['phase'], completed: number, message?: string): void =>
    onProgress?.({ phase, message, totalRequests: total, sent: completed, inFlight: 0, completed, failed: 0, elapsedMs: clock.nowMs() - startedMs });
  report('running', 0);
  let region: RegionReport | undefined;
  const profile = loadProfile(config.profile);
  const virtualConfig = { ...config, numGpus: config.numGpus ?? 1, routingPolicy: config.routingPolicy ?? 'round_robin', maxConcurrency: config.concurrency ?? config.maxConcurrency };
  const stepError = config.twinSensitivity === 'off' ? null : stepErrorFor(profile, config.twinSensitivity);
  const skipped = stepError === null ? null : skippedBand(stepError, total);
  const banded = stepError !== null && skipped === null;
  // The main run lets each request go once it is sent; the band's runs need the same requests again, in their order.
  const bandRequests = banded ? workload.requests.slice() : [];
  const load = await runVirtualTime({
    config: virtualConfig,
    workload,
    routed: testLevel === 'routing',
    clock,
    runId: directory.runId,
    onProgress: (finished) => report('running', finished),
    onRegionReport: (found) => {
      region = found;
    },
  });
  let sensitivity: TwinSensitivity | undefined = skipped ?? undefined;
  if (stepError !== null && banded) {
    report('writing', total, `twin sensitivity: step times -${stepErrorPercentText(stepError.percent)}% and +${stepErrorPercentText(stepError.percent)}%`);
    const requestRate = targetRateOf(config) ?? Infinity;
    // Each run consumes the requests it is given (as the main run did): the first gets a copy, the last the list itself.
    const atScale = async (scale: number, requests: PlannedWorkload['requests']) =>
      bandMetricsOf(
        await runVirtualTime({
          config: virtualConfig,
          workload: { ...workload, requests },
          routed: testLevel === 'routing',
          clock,
          runId: directory.runId,
          stepTimeScale: scale,
          keepTokenTimes: false,
        }),
        testLevel,
        requestRate,
      );
    const minus = await atScale(1 - stepError.percent / 100, bandRequests.slice());
    const plus = await atScale(1 + stepError.percent / 100, bandRequests);
    sensitivity = sensitivityBand(stepError, minus, bandMetricsOf(load, testLevel, requestRate), plus);
  }
  report('writing', total, `writing ${directory.path}`);
  const regionNotice = region === undefined ? null : describeRegionReport(region);
  const schedulingNotice = schedulingContradictionNotice(profile, config);
  const notices = [
    ...planned.notices,
    ...servingPathNotices(config.profile, testLevel),
    ...(schedulingNotice === null ? [] : [schedulingNotice]),
    ...(regionNotice === null ? [] : [regionNotice]),
  ];
  if (testLevel === 'routing' && config.pdDisaggregation === true) notices.push(VIRTUAL_PD_NOTICE);
  // summary.json keeps the counts themselves beside the notice (extras.twinRegion), so a script can check them.
  const extras: Record<string, unknown> = {
    ...(notices.length > 0 ? { notices } : {}),
    ...(region === undefined ? {} : { twinRegion: region }),
    ...(sensitivity === undefined ? {} : { twinSensitivity: sensitivity }),
  };
  return {
    runId: directory.runId,
    outputDirectory: directory.path,
    testLevel,
    target: 'sim',
    requestRate: targetRateOf(config),
    config: { ...config },
    load,
    events: [],
    slo: config.slo,
    simulated: true,
    ...(Object.keys(extras).length > 0 ? { extras } : {}),
  };
}

/** What a PD run in virtual time does not model (the real-time run's notice, measure-routing-test.ts, says the rest). */
export const VIRTUAL_PD_NOTICE =
  "prefill/decode in virtual time: both servers' queues and the KV transfer over a shared link are modelled and the phase columns are the model's own times; not modelled: the prefill server's KV held during its transfer, data-parallel attention ranks, transfer failures, and the handshake messages between the servers (they take no time here)";

/**
 * What the twin leaves out: a profile without a serving latency puts client, router and server one instant apart, so
 * every client-side latency reads low by the path a real run pays (queue_time_in_router, network_time, delivery).
 */
function servingPathNotices(profileSource: string, testLevel: TestLevel): string[] {
  const profile = loadProfile(profileSource);
  // A simple profile is a test device with exact step times and no serving latency by design: nothing to say.
  if (profile.kind === 'simple') return [];
  const latency = profile.servingLatency;
  const viaRouter = testLevel === 'routing' ? latency?.routed : undefined;
  const missing = [
    ...(testLevel === 'routing' && viaRouter === undefined ? ['router'] : []),
    ...(viaRouter === undefined && latency?.networkMs === undefined ? ['network'] : []),
    ...(latency === undefined ? ['ingress', 'delivery'] : []),
  ];
  if (missing.length === 0) return [];
  return [
    `virtual time: profile ${profile.name} carries no ${missing.join(', ')} latency, so those stages are zero and TTFT and ` +
      'total latency read low by what a real run pays there; give the profile a servingLatency (servelab calibrate measures one, docs/simulated-engine.md)',
  ];
}
