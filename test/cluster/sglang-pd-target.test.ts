import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freePortRun } from '../helpers/free-port-run.js';
import { sglangServerArgs } from '../../src/cluster/launchers/sglang/sglang-server-args.js';
import { parseCsv } from '../../src/report/csv/csv-format.js';
import { cliPath, runCli } from '../helpers/cli.js';

/**
 * SGLang in PD mode cannot run here (no GPU, no SGLang, no Mooncake): the stand-in `python` records each launch and
 * serves in the role its --disaggregation-mode gives (through servelab's simulated engine), and its sglang_router
 * answers in PD mode through servelab's builtin router.
 */
const standInDirectory = fileURLToPath(new URL('../fixtures/stand-ins/', import.meta.url));
const fastProfile = fileURLToPath(new URL('../fixtures/profiles/simple-2ms.json', import.meta.url));

/** The PD flags of SGLang's server_args.py (fields disaggregation_mode, disaggregation_transfer_backend, disaggregation_bootstrap_port). */
const SGLANG_PD_FLAGS = ['--disaggregation-mode', '--disaggregation-transfer-backend', '--disaggregation-bootstrap-port'];

let workDirectory: string;
let recordPath: string;
beforeEach(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-sglang-pd-'));
  recordPath = join(workDirectory, 'calls.jsonl');
});
afterEach(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});


describe('SGLang server flags in PD mode', () => {
  it('gives a prefill server its mode, transfer backend and bootstrap port, and a decode server its mode and backend', () => {
    const prefill = sglangServerArgs({ modelPath: 'm', port: 1, disaggregation: { mode: 'prefill', transferBackend: 'nixl', bootstrapPort: 9000 } });
    const decode = sglangServerArgs({ modelPath: 'm', port: 2, disaggregation: { mode: 'decode', transferBackend: 'nixl' } });
    const value = (args: string[], flag: string): string | undefined => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
    expect([value(prefill, '--disaggregation-mode'), value(prefill, '--disaggregation-transfer-backend'), value(prefill, '--disaggregation-bootstrap-port')]).toEqual(['prefill', 'nixl', '9000']);
    expect([value(decode, '--disaggregation-mode'), value(decode, '--disaggregation-transfer-backend'), value(decode, '--disaggregation-bootstrap-port')]).toEqual(['decode', 'nixl', undefined]);
    expect(sglangServerArgs({ modelPath: 'm', port: 3 }).some((flag) => SGLANG_PD_FLAGS.includes(flag))).toBe(false);
  });
});

describe('routing test on --target sglang --pd-disaggregation behind sglang-router (stand-ins)', () => {
  it('launches 2 prefill servers on their own bootstrap ports and 1 decode server on separate GPUs, all on mooncake, and the router in PD mode', async () => {
    const basePort = await freePortRun(3);
    const bootstrapPort = await freePortRun(2);
    const outputDir = join(workDirectory, 'run');
    const result = await runCli(
      ['route', '--target', 'sglang', '--model-path', 'meta-llama/Meta-Llama-3-8B-Instruct', '--pd-disaggregation', '--num-prefill', '2', '--num-decode', '1',
        '--gpu-id', '1', '--tp-size', '2', '--base-port', String(basePort), '--disaggregation-bootstrap-port', String(bootstrapPort),
        '--router', 'sglang-router', '--routing-policy', 'round_robin', '--num-prompts', '12', '--request-rate', '40', '--random-input-len', '16',
        '--random-output-len', '4', '--output-dir', outputDir, '--progress', 'off'],
      { env: { PATH: `${standInDirectory}${delimiter}${process.env.PATH ?? ''}`, STANDIN_MODE: 'ready', STANDIN_RECORD: recordPath, STANDIN_SERVELAB_CLI: cliPath, STANDIN_PROFILE: fastProfile } },
    );
    expect(result.stderr).not.toMatch(/servelab: /);
    expect(result.code).toBe(0);
    const recorded = (await readFile(recordPath, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { args: string[]; cudaVisibleDevices: string | null });
    const value = (args: string[], flag: string): string | undefined => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
    const servers = recorded.filter((call) => call.args[1] === 'sglang.launch_server');
    const byPort = new Map(servers.map((call) => [Number(value(call.args, '--port')), call]));
    const server = (index: number): { args: string[]; cudaVisibleDevices: string | null } => byPort.get(basePort + index) as { args: string[]; cudaVisibleDevices: string | null };
    expect(servers).toHaveLength(3);
    expect([0, 1, 2].map((index) => value(server(index).args, '--disaggregation-mode'))).toEqual(['prefill', 'prefill', 'decode']);
    expect([0, 1, 2].map((index) => value(server(index).args, '--disaggregation-bootstrap-port'))).toEqual([String(bootstrapPort), String(bootstrapPort + 1), undefined]);
    for (const index of [0, 1, 2]) expect(value(server(index).args, '--disaggregation-transfer-backend')).toBe('mooncake');
    // tp 2 from GPU 1: no two servers share a GPU, whatever their role.
    expect([0, 1, 2].map((index) => server(index).cudaVisibleDevices)).toEqual(['1,2', '3,4', '5,6']);
    const router = recorded.find((call) => call.args[1] === 'sglang_router.launch_router');
    const routerArgs = router?.args ?? [];
    expect(routerArgs).toContain('--pd-disaggregation');
    expect(routerArgs).not.toContain('--worker-urls');
    const prefillGroups = routerArgs.flatMap((argument, index) => (argument === '--prefill' ? [routerArgs.slice(index + 1, index + 3)] : []));
    // The router reaches the servers through their tracing taps; each prefill server keeps its own bootstrap port.
    expect(prefillGroups.map(([, port]) => port)).toEqual([String(bootstrapPort), String(bootstrapPort + 1)]);
    for (const [url] of prefillGroups) expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(routerArgs.filter((argument) => argument === '--decode')).toHaveLength(1);
    const rows = parseCsv(await readFile(join(outputDir, 'requests.csv'), 'utf8'));
    const header = rows[0] as string[];
    for (const row of rows.slice(1)) {
      expect(row[header.indexOf('success')], row.join(',')).toBe('true');
      expect(row[header.indexOf('decode_host')]).toBe(`http://127.0.0.1:${basePort + 2}`);
      expect(row[header.indexOf('bootstrap_room')]).toMatch(/^\d+$/);
    }
    // No notice that the sim models no transfer: these are (stand-ins for) SGLang servers.
    expect(await readFile(join(outputDir, 'summary.json'), 'utf8')).not.toContain('no KV transfer is modelled yet');
  }, 120_000);
});
