import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freePortRun } from '../helpers/free-port-run.js';
import { cliPath, runCli } from '../helpers/cli.js';

/**
 * Multi-GPU SGLang launches and sglang-router cannot run here; a stand-in `python` on PATH records what it is asked to
 * run and answers like the real programs (through servelab's simulated engine and builtin router).
 */
const standInDirectory = fileURLToPath(new URL('../fixtures/stand-ins/', import.meta.url));
const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));
/** sglang-router 0.3.x's launch flags (docs/routing.md). */
const REAL_ROUTER_FLAGS = new Set(['--worker-urls', '--host', '--port', '--policy', '--prometheus-port']);

let workDirectory: string;
let recordPath: string;
beforeEach(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-sglang-routing-'));
  recordPath = join(workDirectory, 'calls.jsonl');
});
afterEach(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

function environment(mode = 'ready'): NodeJS.ProcessEnv {
  return { PATH: `${standInDirectory}${delimiter}${process.env.PATH ?? ''}`, STANDIN_MODE: mode, STANDIN_RECORD: recordPath, STANDIN_SERVELAB_CLI: cliPath, STANDIN_PROFILE: fastProfile };
}

async function calls(): Promise<{ args: string[]; cudaVisibleDevices: string | null }[]> {
  return (await readFile(recordPath, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { args: string[]; cudaVisibleDevices: string | null });
}

describe('routing test on the sglang target behind sglang-router (stand-ins)', () => {
  it('launches one SGLang server per GPU on consecutive ports and sglang-router with its real flags', async () => {
    const basePort = await freePortRun(2);
    const outputDir = join(workDirectory, 'run');
    const result = await runCli(
      ['route', '--target', 'sglang', '--model-path', 'meta-llama/Meta-Llama-3-8B-Instruct', '--num-gpus', '2', '--base-port', String(basePort),
        '--router', 'sglang-router', '--routing-policy', 'round_robin', '--num-prompts', '30', '--request-rate', '60', '--random-input-len', '16',
        '--random-output-len', '4', '--output-dir', outputDir, '--progress', 'off'],
      { env: environment() },
    );
    expect(result.stderr).not.toMatch(/servelab: /);
    expect(result.code).toBe(0);
    const recorded = await calls();
    const servers = recorded.filter((call) => call.args[1] === 'sglang.launch_server');
    const routers = recorded.filter((call) => call.args[1] === 'sglang_router.launch_router');
    expect(servers).toHaveLength(2);
    expect(servers.map((call) => call.cudaVisibleDevices).sort()).toEqual(['0', '1']);
    const ports = servers.map((call) => Number(call.args[call.args.indexOf('--port') + 1])).sort((first, second) => first - second);
    expect(ports).toEqual([basePort, basePort + 1]);
    for (const call of servers) expect(call.args).toContain('--enable-metrics');
    expect(routers).toHaveLength(1);
    const routerArgs = (routers[0] as { args: string[] }).args;
    for (const flag of routerArgs.filter((argument) => argument.startsWith('--'))) expect(REAL_ROUTER_FLAGS).toContain(flag);
    expect(routerArgs[routerArgs.indexOf('--policy') + 1]).toBe('round_robin');
    expect(routerArgs).toContain('--prometheus-port');
    // With taps on, the router is given the taps' URLs, one per server.
    const afterWorkerFlag = routerArgs.slice(routerArgs.indexOf('--worker-urls') + 1);
    const workerUrls = afterWorkerFlag.slice(0, afterWorkerFlag.findIndex((argument) => argument.startsWith('--')));
    expect(workerUrls).toHaveLength(2);
    const csv = await readFile(join(outputDir, 'requests.csv'), 'utf8');
    expect(csv.trim().split('\n')).toHaveLength(31);
  });

  it('says clearly when sglang-router is not installed', async () => {
    const result = await runCli(
      ['route', '--num-gpus', '1', '--router', 'sglang-router', '--routing-policy', 'round_robin', '--profile', fastProfile, '--num-prompts', '5',
        '--output-dir', join(workDirectory, 'run'), '--progress', 'off'],
      { env: environment('no-module') },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/sglang-router is not installed/);
  });
});
