import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeTest, ServelabError } from '../../src/index.js';
import { runCli } from '../helpers/cli.js';

const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
let workDirectory: string;

beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-library-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

describe('NodeTest (library)', () => {
  it('runs against the simulated engine and returns the metrics and the exported file paths', async () => {
    const test = new NodeTest({ requestRate: 100, numPrompts: 40, randomInputLen: 32, randomOutputLen: 8, profile: fastProfile, outputDir: join(workDirectory, 'library-run'), warmupRequests: 2 });
    expect(test.config.seed).toBe(1);
    const progressPhases = new Set<string>();
    const result = await test.run({ onProgress: (progress) => progressPhases.add(progress.phase) });
    expect(result.status).toBe('completed');
    expect(result.run.records).toHaveLength(40);
    expect(result.run.records.every((record) => !record.warmup)).toBe(true);
    expect(result.run.records.every((record) => record.success)).toBe(true);
    expect(progressPhases).toContain('starting');
    expect(progressPhases).toContain('running');
    for (const path of [result.exportedFiles.csv, result.exportedFiles.parquet, result.exportedFiles.json, result.exportedFiles.jsonl, result.exportedFiles.config]) {
      expect(path).toBeDefined();
      expect((await readFile(path as string, 'utf8')).length).toBeGreaterThan(10);
    }
    // Every request's lifecycle is in order on the client's and the server's clocks.
    for (const record of result.run.records) {
      const order = [record.scheduledTime, record.serverCreatedTime, record.queueTimeStart, record.queueTimeEnd, record.serverFirstTokenTime];
      for (let index = 1; index < order.length; index++) expect(order[index] as number).toBeGreaterThanOrEqual((order[index - 1] as number) - 1e-6);
      expect(record.firstTokenTime as number).toBeLessThanOrEqual(record.finishTime as number);
      expect(record.arrivalTime as number).toBeLessThanOrEqual(record.firstTokenTime as number);
      expect(record.routerSendTime).toBe(record.arrivalTime);
    }
  });

  it('is reproducible from its seed: the same prompts and the same schedule', async () => {
    const settings = { requestRate: 200, numPrompts: 20, randomInputLen: 32, randomOutputLen: 4, profile: fastProfile, seed: 11, warmupRequests: 0 };
    const first = await new NodeTest({ ...settings, outputDir: join(workDirectory, 'seed-a') }).run();
    const second = await new NodeTest({ ...settings, outputDir: join(workDirectory, 'seed-b') }).run();
    const offsets = (result: typeof first): number[] => result.run.records.map((record) => record.scheduledTime - result.run.info.startTime);
    expect(first.run.records.map((record) => record.inputLength)).toEqual(second.run.records.map((record) => record.inputLength));
    const secondOffsets = offsets(second);
    // Epoch seconds carry about 0.2 µs of float resolution: the schedules agree to well under a microsecond.
    offsets(first).forEach((offset, index) => expect(offset).toBeCloseTo(secondOffsets[index] as number, 5));
    expect(new Set(offsets(first)).size).toBe(20);
  });

  it('rejects an invalid configuration with an error that names the setting', () => {
    expect(() => new NodeTest({ numPrompts: 0 })).toThrow(ServelabError);
    expect(() => new NodeTest({ numPrompts: 0 })).toThrow(/numPrompts \(--num-prompts\)/);
    expect(() => new NodeTest({ requestRat: 5 } as Record<string, unknown>)).toThrow(/unknown setting "requestRat"/);
    expect(() => new NodeTest({ datasetName: 'sharegpt' })).toThrow(/--dataset-path/);
  });
});

describe('servelab run FILE', () => {
  it('runs a node test from a YAML file, resolving paths relative to the file', async () => {
    const directory = join(workDirectory, 'yaml');
    await rm(directory, { recursive: true, force: true });
    const { mkdir } = await import('node:fs/promises');
    await mkdir(directory, { recursive: true });
    const file = join(directory, 'experiment.yaml');
    await writeFile(file, ['test: node', 'requestRate: 100', 'numPrompts: 15', 'randomInputLen: 16', 'randomOutputLen: 4', `profile: ${fastProfile}`, 'outputDir: out', 'progress: off'].join('\n'));
    const result = await runCli(['run', file]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const csv = await readFile(join(directory, 'out', 'requests.csv'), 'utf8');
    expect(csv.trim().split('\n')).toHaveLength(16);
  });

  it('names the problem in a bad file', async () => {
    const file = join(workDirectory, 'bad.yaml');
    await writeFile(file, 'test: cluster\n');
    const wrongTest = await runCli(['run', file]);
    expect(wrongTest.code).toBe(2);
    expect(wrongTest.stderr).toMatch(/test must be "node" or "routing"/);
    const missing = await runCli(['run', join(workDirectory, 'nope.yaml')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/cannot read the config file/);
  });
});

describe('analyzeResults and visualizeResults (library)', () => {
  it('reads a run back, re-analyzes it with other objectives, and regenerates its report', async () => {
    const { analyzeResults, visualizeResults } = await import('../../src/index.js');
    const outputDir = join(workDirectory, 'analyze');
    const result = await new NodeTest({ requestRate: 200, numPrompts: 30, randomInputLen: 16, randomOutputLen: 4, profile: fastProfile, outputDir, warmupRequests: 0 }).run();
    const strict = await analyzeResults(outputDir, { slo: { ttftMs: 0.001 } });
    const lenient = await analyzeResults(outputDir, { slo: { ttftMs: 60_000 } });
    expect(strict.run.records).toHaveLength(30);
    expect(strict.metrics.counts.total).toBe(result.metrics.counts.total);
    expect(strict.metrics.goodput?.goodRequests).toBe(0);
    expect(lenient.metrics.goodput?.goodRequests).toBe(30);
    const written = await visualizeResults(outputDir);
    expect(written.some((path) => path.endsWith('report.html'))).toBe(true);
    await expect(analyzeResults(join(workDirectory, 'not-a-run'))).rejects.toThrow(/not a directory/);
  });
});

describe('closed loop and stages (node test on the simulated engine)', () => {
  it('a closed loop never has more than N requests in flight and sends each next request when one finishes', async () => {
    const result = await new NodeTest({ concurrency: 3, numPrompts: 30, randomInputLen: 16, randomOutputLen: 6, profile: fastProfile, warmupRequests: 0, outputDir: join(workDirectory, 'closed') }).run();
    expect(result.run.records).toHaveLength(30);
    const events = result.run.records.flatMap((record) => [
      { time: record.arrivalTime as number, change: 1 },
      { time: record.finishTime as number, change: -1 },
    ]);
    events.sort((first, second) => first.time - second.time || first.change - second.change);
    let inFlight = 0;
    let peak = 0;
    for (const event of events) {
      inFlight += event.change;
      peak = Math.max(peak, inFlight);
    }
    expect(peak).toBe(3);
  });

  it('stages of rates shape the arrivals: a slow stage, then a fast one', async () => {
    const result = await new NodeTest({ stages: [{ durationS: 1, rate: 10 }, { durationS: 1, rate: 100 }], numPrompts: 80, randomInputLen: 16, randomOutputLen: 2, profile: fastProfile, warmupRequests: 0, outputDir: join(workDirectory, 'stages') }).run();
    const offsets = result.run.records.map((record) => record.scheduledTime - result.run.info.startTime);
    const inFirstSecond = offsets.filter((offset) => offset < 1).length;
    const inSecondSecond = offsets.filter((offset) => offset >= 1 && offset < 2).length;
    // About 10 then about 100 arrivals (Poisson counts: generous bounds).
    expect(inFirstSecond).toBeLessThan(25);
    expect(inSecondSecond).toBeGreaterThan(inFirstSecond * 3);
  });

  it('rejects mixed stages and think time without users', () => {
    expect(() => new NodeTest({ stages: [{ durationS: 1, rate: 5 }, { durationS: 1, concurrency: 2 }] })).toThrow(/not a mix/);
    expect(() => new NodeTest({ thinkTimeMs: 100 })).toThrow(/--concurrency/);
  });
});

describe('replaying a custom dataset\'s own timestamps', () => {
  it('sends each row at its timestamp (scaled), with its prompt and output length', async () => {
    const datasetPath = join(workDirectory, 'timed.jsonl');
    const rows = [0, 0.2, 0.25, 0.9].map((timestamp, index) => JSON.stringify({ prompt: `question number ${index} about routing`, output_len: 3, timestamp: 1000 + timestamp }));
    await writeFile(datasetPath, `${rows.join('\n')}\n`);
    const result = await new NodeTest({ datasetName: 'custom', datasetPath, arrival: 'trace', traceTimeScale: 2, numPrompts: 4, warmupRequests: 0, profile: fastProfile, outputDir: join(workDirectory, 'timed') }).run();
    const offsets = result.run.records.map((record) => record.scheduledTime - result.run.info.startTime);
    [0, 0.4, 0.5, 1.8].forEach((expected, index) => expect(offsets[index]).toBeCloseTo(expected, 5));
    expect(result.run.records.map((record) => record.expectedOutputLength)).toEqual([3, 3, 3, 3]);
  });
});

describe('--tokenizer', () => {
  it('gives prompts exactly their drawn token counts for the given tokenizer.json', async () => {
    const { loadTokenizer } = await import('../../src/workload/tokenizer/load-tokenizer.js');
    const tokenizerPath = fileURLToPath(new URL('../fixtures/tokenizers/wordpiece/tokenizer.json', import.meta.url));
    const result = await new NodeTest({ tokenizerPath, numPrompts: 12, randomInputLen: 40, randomRangeRatio: 0.2, randomOutputLen: 2, requestRate: 200, warmupRequests: 0, profile: fastProfile, outputDir: join(workDirectory, 'tokenizer') }).run();
    const tokenizer = await loadTokenizer(tokenizerPath);
    const jsonl = (await readFile(join(workDirectory, 'tokenizer', 'requests.jsonl'), 'utf8')).trim().split('\n');
    expect(jsonl).toHaveLength(12);
    expect(result.run.records.every((record) => record.inputLength >= 8 && record.inputLength <= 40)).toBe(true);
    // The records keep the intended lengths; re-tokenizing what the workload built gives them back exactly.
    const { buildWorkload } = await import('../../src/orchestration/build-workload.js');
    const workload = await buildWorkload({ ...result.run.config, tokenizerPath } as Parameters<typeof buildWorkload>[0]);
    workload.requests.forEach((request, index) => {
      expect(tokenizer.countTokens(request.prompt as string)).toBe(request.inputLength);
      expect(request.inputLength).toBe(result.run.records[index]?.inputLength);
    });
  });
});

describe('the run directory', () => {
  it('refuses a directory that already holds a run, and a file, so nothing measured before is overwritten', async () => {
    const outputDir = join(workDirectory, 'taken');
    await new NodeTest({ numPrompts: 3, randomInputLen: 8, randomOutputLen: 2, requestRate: 100, warmupRequests: 0, profile: fastProfile, outputDir }).run();
    const before = await readFile(join(outputDir, 'requests.csv'), 'utf8');
    await expect(new NodeTest({ numPrompts: 3, profile: fastProfile, outputDir }).run()).rejects.toThrow(/already holds a run \(summary\.json\); choose a new --output-dir/);
    expect(await readFile(join(outputDir, 'requests.csv'), 'utf8')).toBe(before);
    await expect(new NodeTest({ numPrompts: 3, profile: fastProfile, outputDir: join(outputDir, 'requests.csv') }).run()).rejects.toThrow(/is a file/);
  });

  it.runIf(process.platform === 'linux')('fails with a clear error, instead of hanging, where a directory cannot be made (under /proc)', async () => {
    const outputDir = `/proc/servelab-test-${process.pid}/run`;
    // A hang fails on the test's timeout (vitest.config.ts).
    await expect(new NodeTest({ numPrompts: 3, profile: fastProfile, outputDir }).run()).rejects.toThrow(
      /cannot create the output directory \/proc\/servelab-test-\d+\/run \(ENOENT\); choose a writable --output-dir/,
    );
  });

  it('can run a run\'s own config.json again (into a new directory)', async () => {
    const first = join(workDirectory, 'rerun-source');
    await new NodeTest({ numPrompts: 4, randomInputLen: 8, randomOutputLen: 2, profile: fastProfile, warmupRequests: 0, outputDir: first }).run();
    const result = await runCli(['run', join(first, 'config.json'), '--output-dir', join(workDirectory, 'rerun-copy'), '--progress', 'off']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });
});

describe('--client-workers', () => {
  it('spreads the same workload over two load generator threads sharing one start instant', async () => {
    const settings = { numPrompts: 40, requestRate: 200, randomInputLen: 16, randomOutputLen: 4, warmupRequests: 1, profile: fastProfile, seed: 4 };
    const result = await new NodeTest({ ...settings, clientWorkers: 2, outputDir: join(workDirectory, 'two-workers') }).run();
    expect(result.run.records).toHaveLength(40);
    expect(result.run.records.every((record) => record.success)).toBe(true);
    expect(result.run.records.map((record) => record.datasetIndex)).toEqual(Array.from({ length: 40 }, (_, index) => index));
    expect(() => new NodeTest({ ...settings, clientWorkers: 2, concurrency: 3, requestRate: undefined })).toThrow(/closed loop .* runs in one/);
  });
});

describe('a dataset with fewer requests than asked for', () => {
  it('says so in the run (extras.notices) and in the terminal summary instead of running quietly short', async () => {
    const { formatTerminalSummary } = await import('../../src/report/terminal/format-terminal-summary.js');
    const datasetPath = join(workDirectory, 'short.jsonl');
    await writeFile(datasetPath, ['a first question', 'a second question', 'a third one'].map((prompt) => JSON.stringify({ prompt, output_len: 2 })).join('\n'));
    const result = await new NodeTest({ datasetName: 'custom', datasetPath, numPrompts: 10, warmupRequests: 0, requestRate: 100, profile: fastProfile, outputDir: join(workDirectory, 'short') }).run();
    expect(result.run.records).toHaveLength(3);
    expect(result.run.extras?.notices).toEqual(['the custom dataset gave 3 usable requests of the 10 asked for (--num-prompts); the run measured 3']);
    expect(formatTerminalSummary(result.run, result.metrics)).toContain('Note: the custom dataset gave 3 usable requests of the 10 asked for');
  });

  it('says when shared-prefix makes another number of requests than --num-prompts, and is silent when they agree', async () => {
    const { formatTerminalSummary } = await import('../../src/report/terminal/format-terminal-summary.js');
    const sharedPrefix = { datasetName: 'shared-prefix', gspNumGroups: 4, gspPromptsPerGroup: 3, gspSystemPromptLen: 16, gspQuestionLen: 8, gspOutputLen: 2, warmupRequests: 0, requestRate: 200, profile: fastProfile, virtualTime: true, progress: 'off' } as const;
    const result = await new NodeTest({ ...sharedPrefix, numPrompts: 10, outputDir: join(workDirectory, 'gsp-differs') }).run();
    expect(result.run.records).toHaveLength(12);
    const notice = 'the shared-prefix dataset made 12 requests (--gsp-num-groups 4 × --gsp-prompts-per-group 3), not the 10 asked for (--num-prompts); the run measured 12';
    expect(result.run.extras?.notices).toEqual([notice]);
    expect(formatTerminalSummary(result.run, result.metrics)).toContain(`Note: ${notice}`);
    expect(JSON.parse(await readFile(result.exportedFiles.json as string, 'utf8')).extras.notices).toEqual([notice]);
    const agreeing = await new NodeTest({ ...sharedPrefix, numPrompts: 12, outputDir: join(workDirectory, 'gsp-agrees') }).run();
    expect(agreeing.run.extras?.notices).toBeUndefined();
  });
});
