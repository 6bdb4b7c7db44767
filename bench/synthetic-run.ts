import type { RequestRecord } from '../src/types/record.js';
import type { RunData } from '../src/types/run.js';
import { SeededRandom } from '../src/utils/random.js';

/**
 * A finished routing run of `count` synthetic requests (Poisson arrivals at 1,000 req/s over 8 hosts, every lifecycle
 * instant set, 1% failed), the same for a given count: the input of the analysis and writer benchmarks.
 */
export function syntheticRun(count: number, tokensPerRequest: number): RunData {
  const random = new SeededRandom(7);
  const t0 = 1_700_000_000;
  const rate = 1000;
  const hosts = Array.from({ length: 8 }, (_, index) => `http://127.0.0.1:${30001 + index}`);
  const records: RequestRecord[] = new Array(count);
  let scheduled = t0;
  for (let index = 0; index < count; index++) {
    scheduled += -Math.log(1 - random.next()) / rate;
    const arrival = scheduled + 0.00005 + random.next() * 0.0001;
    const routerSend = arrival + 0.0002;
    const created = routerSend + 0.0001;
    const queueStart = created + 0.0005;
    const queueEnd = queueStart + random.next() * 0.05;
    const serverFirstToken = queueEnd + 0.02 + random.next() * 0.01;
    const firstToken = serverFirstToken + 0.0003;
    const gap = 0.005 + random.next() * 0.003;
    const finish = firstToken + gap * (tokensPerRequest - 1);
    const success = random.next() > 0.01;
    records[index] = {
      requestId: `r${index}`,
      datasetIndex: index,
      warmup: false,
      inputLength: 128,
      expectedOutputLength: tokensPerRequest,
      scheduledTime: scheduled,
      arrivalTime: arrival,
      routerSendTime: routerSend,
      host: hosts[index % hosts.length] as string,
      serverCreatedTime: created,
      queueTimeStart: queueStart,
      queueTimeEnd: queueEnd,
      serverFirstTokenTime: serverFirstToken,
      firstTokenTime: firstToken,
      finishTime: success ? finish : undefined,
      actualPromptTokens: 128,
      actualOutputTokens: tokensPerRequest,
      cachedTokens: 64,
      interTokenLatencies: new Array<number>(tokensPerRequest - 1).fill(gap),
      success,
      error: success ? undefined : 'http_5xx',
      prefixGroup: index % 64,
    };
  }
  return {
    info: {
      runId: 'bench',
      testLevel: 'routing',
      target: 'sim',
      status: 'completed',
      startTime: t0,
      endTime: scheduled + 1,
      requestRate: rate,
      simulated: true,
      servelabVersion: '0.1.0',
    },
    config: { requestRate: rate },
    records,
    events: [],
  };
}
