import { mkdtemp, rm, appendFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitStatusOf, hasEnded, parseJobLine } from '../../../src/cluster/slurm-jobs/job-state.js';
import { JobOutputTail } from '../../../src/cluster/slurm-jobs/job-output-tail.js';

let workDirectory: string;
beforeAll(async () => {
  workDirectory = await mkdtemp(join(tmpdir(), 'servelab-job-state-'));
});
afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

describe('a job as scontrol show job -o describes it', () => {
  // Slurm 22.05's one-line form, shortened; WorkDir holds a space and text that looks like another field.
  const line = (state: string, exit: string, reason = 'None'): string =>
    `JobId=7 JobName=servelab-r1 UserId=root(0) GroupId=root(0) Priority=1 Account=(null) QOS=(null) JobState=${state} Reason=${reason} Dependency=(null) ExitCode=${exit} RunTime=00:00:03 NodeList=n[1-2] BatchHost=n1 WorkDir=/home/a b JobState=COMPLETED StdOut=/x`;

  it('reads the state, the reason, the exit code and signal, and the nodes', () => {
    expect(parseJobLine(line('RUNNING', '0:0'))).toEqual({ state: 'RUNNING', exitCode: 0, exitSignal: 0, nodeList: 'n[1-2]' });
    expect(parseJobLine(line('FAILED', '1:0', 'NonZeroExitCode'))).toMatchObject({ state: 'FAILED', reason: 'NonZeroExitCode', exitCode: 1 });
    expect(parseJobLine('slurm_load_jobs error: Invalid job id specified')).toBeUndefined();
  });

  it('gives the run\'s exit status: the coordinator\'s, 128 + a signal, and 1 for a bad end with status 0', () => {
    expect(exitStatusOf(parseJobLine(line('COMPLETED', '0:0'))!)).toBe(0);
    expect(exitStatusOf(parseJobLine(line('FAILED', '143:0'))!)).toBe(143);
    expect(exitStatusOf(parseJobLine(line('CANCELLED', '0:15'))!)).toBe(143);
    expect(exitStatusOf(parseJobLine(line('TIMEOUT', '0:9'))!)).toBe(137);
    expect(exitStatusOf(parseJobLine(line('NODE_FAIL', '0:0'))!)).toBe(1);
    expect(['PENDING', 'RUNNING', 'COMPLETING'].some(hasEnded)).toBe(false);
    expect(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT', 'NODE_FAIL', 'OUT_OF_MEMORY'].every(hasEnded)).toBe(true);
  });
});

describe('the job output tail', () => {
  it('relays whole lines only, a character cut by a read included, and the rest at the end', async () => {
    const path = join(workDirectory, 'out');
    const tail = new JobOutputTail(path);
    expect(await tail.read()).toBe(''); // the file appears when the job starts
    const text = Buffer.from('one\ntwo é', 'utf8');
    await writeFile(path, text.subarray(0, text.length - 1)); // 'é' cut in two
    expect(await tail.read()).toBe('one\n');
    await appendFile(path, Buffer.concat([text.subarray(text.length - 1), Buffer.from('\nthree')]));
    expect(await tail.read()).toBe('two é\n');
    expect(await tail.read(true)).toBe('three\n');
  });
});
