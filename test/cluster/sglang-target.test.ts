import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, delimiter } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freePortRun } from '../helpers/free-port-run.js';
import { NodeTest, RoutingTest } from '../../src/index.js';
import { cliPath, isAlive, pidFromLog, runCli } from '../helpers/cli.js';

/**
 * The sglang target cannot run here (no GPU, no SGLang), so a stand-in `python` on PATH records the flags it receives
 * and behaves like the real server in each way that matters: ready, never ready, dying early, not installed.
 */
const standInDirectory = fileURLToPath(new URL('../fixtures/stand-ins/', import.meta.url));
const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));

/** Every flag SGLang's server_args.py defines that servelab may pass (field `tp_size` → flag `--tp-size`). */
const REAL_SGLANG_FLAGS = new Set([
  '--model-path', '--host', '--port', '--tp-size', '--max-running-requests', '--max-total-tokens', '--mem-fraction-static',
  '--chunked-prefill-size', '--schedule-policy', '--schedule-conservativeness', '--enable-torch-compile', '--quantization',
  '--disable-radix-cache', '--enable-metrics', '--enable-cache-report', '--export-metrics-to-file', '--export-metrics-to-file-dir',
]);

let workDirectory: string;
let recordPath: string;

beforeEach(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-sglang-'));
  recordPath = join(workDirectory, 'stand-in-calls.jsonl');
});
afterEach(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

function environment(mode: string): NodeJS.ProcessEnv {
  return {
    PATH: `${standInDirectory}${delimiter}${process.env.PATH ?? ''}`,
    STANDIN_MODE: mode,
    STANDIN_RECORD: recordPath,
    STANDIN_SERVELAB_CLI: cliPath,
    STANDIN_PROFILE: fastProfile,
  };
}

async function recordedCall(): Promise<{ args: string[]; cudaVisibleDevices: string | null }> {
  const lines = (await readFile(recordPath, 'utf8')).trim().split('\n');
  return JSON.parse(lines[0] as string) as { args: string[]; cudaVisibleDevices: string | null };
}

describe('node test with --target sglang (stand-in python)', () => {
  it('launches python -m sglang.launch_server with SGLang\'s real flags, pins the GPUs, runs, and stops it', async () => {
    const port = await freePortRun(1);
    const outputDir = join(workDirectory, 'run');
    const result = await runCli(
      ['node', '--target', 'sglang', '--model-path', 'meta-llama/Meta-Llama-3-8B-Instruct', '--gpu-id', '2', '--tp-size', '2',
        '--port', String(port), '--max-running-requests', '64', '--chunked-prefill-size', '4096', '--mem-fraction-static', '0.85',
        '--schedule-policy', 'lpm', '--num-prompts', '20', '--request-rate', '40', '--random-input-len', '32',
        '--random-output-len', '8', '--output-dir', outputDir, '--progress', 'off'],
      { env: environment('ready') },
    );
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    const call = await recordedCall();
    expect(call.args.slice(0, 2)).toEqual(['-m', 'sglang.launch_server']);
    const flags = call.args.filter((argument) => argument.startsWith('--'));
    for (const flag of flags) expect(REAL_SGLANG_FLAGS, `unexpected flag ${flag}`).toContain(flag);
    const valueOf = (flag: string): string | undefined => call.args[call.args.indexOf(flag) + 1];
    expect(valueOf('--model-path')).toBe('meta-llama/Meta-Llama-3-8B-Instruct');
    expect(valueOf('--port')).toBe(String(port));
    expect(valueOf('--tp-size')).toBe('2');
    expect(valueOf('--max-running-requests')).toBe('64');
    expect(valueOf('--chunked-prefill-size')).toBe('4096');
    expect(valueOf('--mem-fraction-static')).toBe('0.85');
    expect(valueOf('--schedule-policy')).toBe('lpm');
    expect(flags).toContain('--enable-metrics');
    // Cached tokens in OpenAI usage, and one request-log line per request written into the run's logs.
    expect(flags).toContain('--enable-cache-report');
    expect(flags).toContain('--export-metrics-to-file');
    expect(valueOf('--export-metrics-to-file-dir')).toBe(join(outputDir, 'logs', 'sglang-request-logs'));
    expect(call.cudaVisibleDevices).toBe('2,3');
    const summary = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as Record<string, unknown>;
    expect(JSON.stringify(summary)).toContain('"completed"');
    const log = await readFile(join(outputDir, 'logs', 'sglang.log'), 'utf8');
    expect(log).toContain('The server is fired up and ready to roll!');
    const pid = pidFromLog(log);
    expect(pid).toBeDefined();
    expect(isAlive(pid as number)).toBe(false);
  });

  it("joins the server's request-log lines to the records by request id and counts the lines it could not join", async () => {
    const port = await freePortRun(1);
    const outputDir = join(workDirectory, 'run');
    const result = await runCli(
      ['node', '--target', 'sglang', '--model-path', 'some/model', '--port', String(port), '--protocol', 'openai-completions',
        '--num-prompts', '4', '--request-rate', 'inf', '--random-input-len', '16', '--random-output-len', '8', '--run-id', 'joined',
        '--output-dir', outputDir, '--progress', 'off'],
      { env: { ...environment('ready'), STANDIN_EXPORT_IDS: 'joined-0,joined-2' } },
    );
    expect(result.code).toBe(0);
    const summary = JSON.parse(await readFile(join(outputDir, 'summary.json'), 'utf8')) as { extras?: { serverRequestLogs?: Record<string, unknown> } };
    expect(summary.extras?.serverRequestLogs).toMatchObject({ lines: 3, joinedRecords: 2, unjoinedLines: 1, recordsWithoutLine: 2 });
    expect(result.stdout + result.stderr).toMatch(/server request logs: 1 of 3 lines match no request of this run/);
    const log = await readFile(join(outputDir, 'logs', 'sglang-request-logs', 'sglang-request-metrics-20261123_08.log'), 'utf8');
    expect(log.trim().split('\n')).toHaveLength(3);
    // The OpenAI stream carries no server timing: the joined records get it from the log, the others stay empty.
    const rows = (await readFile(join(outputDir, 'requests.csv'), 'utf8')).trim().split('\n');
    const header = (rows[0] as string).split(',');
    const cell = (id: string, column: string) => (rows.find((row) => row.startsWith(`${id},`)) as string).split(',')[header.indexOf(column)];
    expect(cell('joined-0', 'server_dispatch_time')).not.toBe('');
    expect(cell('joined-2', 'server_finish_time')).not.toBe('');
    expect(cell('joined-1', 'server_dispatch_time')).toBe('');
  });

  it('reports a server that never gets ready within the timeout, with its log tail, and leaves nothing running', async () => {
    const outputDir = join(workDirectory, 'run');
    const result = await runCli(
      ['node', '--target', 'sglang', '--model-path', 'some/model', '--port', String(await freePortRun(1)), '--ready-timeout', '2',
        '--num-prompts', '5', '--output-dir', outputDir, '--progress', 'off'],
      { env: environment('never-ready') },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/did not get ready within 2 s/);
    expect(result.stderr).toContain('Loading safetensors checkpoint shards');
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace without --debug
    const pid = pidFromLog(await readFile(join(outputDir, 'logs', 'sglang.log'), 'utf8'));
    expect(isAlive(pid as number)).toBe(false);
  });

  it('reports a server that exits early, with its exit code and the tail of its log', async () => {
    const result = await runCli(
      ['node', '--target', 'sglang', '--model-path', 'some/model', '--port', String(await freePortRun(1)), '--num-prompts', '5',
        '--output-dir', join(workDirectory, 'run'), '--progress', 'off'],
      { env: environment('exit-early') },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/exited with code 1 before it could get ready/);
    expect(result.stderr).toContain('CUDA out of memory');
  });

  it('says clearly when SGLang is not installed', async () => {
    const result = await runCli(
      ['node', '--target', 'sglang', '--model-path', 'some/model', '--port', String(await freePortRun(1)), '--num-prompts', '5',
        '--output-dir', join(workDirectory, 'run'), '--progress', 'off'],
      { env: environment('no-module') },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/SGLang is unavailable: "python" has no sglang module/);
  });
});

describe('a model and a GPU mean SGLang, as in the first users\' framework', () => {
  it('runs SGLang for --model-path and --gpu-id without --target, on the GPU asked for, never the simulator', async () => {
    const port = await freePortRun(1);
    const outputDir = join(workDirectory, 'run');
    const result = await runCli(
      ['node', '--model-path', 'some/model', '--gpu-id', '1', '--port', String(port), '--num-prompts', '4', '--request-rate', 'inf',
        '--random-input-len', '16', '--random-output-len', '4', '--output-dir', outputDir, '--progress', 'off'],
      { env: environment('ready') },
    );
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    const call = await recordedCall();
    expect(call.args.slice(0, 2)).toEqual(['-m', 'sglang.launch_server']);
    expect(call.cudaVisibleDevices).toBe('1');
    const config = JSON.parse(await readFile(join(outputDir, 'config.json'), 'utf8')) as { target?: string; settings?: { target?: string } };
    expect(config.target ?? config.settings?.target).toBe('sglang');
  });

  it('says in one line, where SGLang is not installed, how to ask for the simulated engine', async () => {
    const result = await runCli(
      ['node', '--model-path', 'some/model', '--port', String(await freePortRun(1)), '--num-prompts', '5', '--output-dir', join(workDirectory, 'run'), '--progress', 'off'],
      { env: environment('no-module') },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/SGLang is unavailable: "python" has no sglang module; .*add --target sim \(target: sim in a config\) to run the simulated engine instead/);
  });

  it('reads their snake_case model_path / gpu_id as SGLang in the library, and refuses real-server settings on the simulator', () => {
    expect(new NodeTest({ model_path: 'some/model', gpu_id: 3 }).config.target).toBe('sglang');
    // A GPU alone asks for SGLang too, which then needs a model: an error, never a quiet simulation.
    expect(() => new NodeTest({ gpu_id: 0 })).toThrow(/--target sglang needs --model-path/);
    expect(new RoutingTest({ model_path: 'some/model', num_gpus: 2 }).config.target).toBe('sglang');
    expect(new NodeTest({ model_path: 'some/model', target: 'sim' }).config.target).toBe('sim');
    expect(new NodeTest({}).config.target).toBe('sim');
    expect(() => new NodeTest({ target: 'sim', gpu_id: 2, tp_size: 2, quantization: 'fp8' })).toThrow(
      /--gpu-id, --tp-size, --quantization configure a real SGLang server, and the simulated engine has none to apply them to/,
    );
    expect(() => new NodeTest({ target: 'sim', memFractionStatic: 0.8 })).toThrow(/--mem-fraction-static configures a real SGLang server/);
    expect(() => new NodeTest({ target: 'sim', extraServerArgs: ['--foo'] })).toThrow(/--extra-server-args configures a real SGLang server/);
    expect(new NodeTest({ target: 'sim', extraServerArgs: [] }).config.target).toBe('sim');
  });
});
