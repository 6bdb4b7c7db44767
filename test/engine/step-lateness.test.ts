import { describe, expect, it } from 'vitest';
import { startSimServer } from '../../src/engine/http/start-sim-server.js';
import { StepLateness } from '../../src/engine/http/step-lateness.js';
import { controlTokenHeaders } from '../../src/routing/router/control-auth.js';
import { HARNESS_PATH } from '../../src/utils/process-health.js';

describe('step lateness', () => {
  it('summarises how late steps completed, at 0.05 ms resolution, keeping the maximum exactly', () => {
    const lateness = new StepLateness();
    for (let step = 0; step < 98; step++) lateness.record(0.12);
    lateness.record(2.5);
    lateness.record(7.25);
    lateness.recordReanchor();
    const snapshot = lateness.snapshot();
    expect(snapshot.steps).toBe(100);
    expect(snapshot.p50Ms).toBeCloseTo(0.15, 9);
    expect(snapshot.p99Ms).toBeCloseTo(2.55, 9);
    expect(snapshot.maxMs).toBe(7.25);
    expect(snapshot.reanchors).toBe(1);
    lateness.reset();
    expect(lateness.snapshot().steps).toBe(0);
  });

  it('is served by the sim-server in /server_info after it has stepped', async () => {
    const server = await startSimServer({ profile: JSON.stringify({ kind: 'simple', stepMs: 2 }) });
    try {
      const response = await fetch(`${server.url}/generate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'hello there', sampling_params: { max_new_tokens: 5, ignore_eos: true } }),
      });
      await response.text();
      const info = (await (await fetch(`${server.url}/server_info`)).json()) as { servelab_step_lateness_ms?: { steps: number; maxMs: number } };
      expect(info.servelab_step_lateness_ms?.steps).toBe(5);
      expect(info.servelab_step_lateness_ms?.maxMs).toBeGreaterThanOrEqual(0);
    } finally {
      await server.close();
    }
  });

  it("reports on itself for a run's harness at /_servelab/harness: its CPU and step lateness since the last DELETE", async () => {
    const server = await startSimServer({ profile: JSON.stringify({ kind: 'simple', stepMs: 2 }) });
    try {
      const generate = async (): Promise<void> => {
        const response = await fetch(`${server.url}/generate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ text: 'hello there', sampling_params: { max_new_tokens: 5, ignore_eos: true } }),
        });
        await response.text();
      };
      type Health = { pid: number; event_loop_delay_ms: unknown; cpu_s: number; step_lateness_ms: { steps: number } };
      const health = async (): Promise<Health> => (await (await fetch(`${server.url}${HARNESS_PATH}`, { headers: controlTokenHeaders() })).json()) as Health;
      await generate();
      const before = await health();
      expect(before.pid).toBe(process.pid);
      // No event-loop timer in a simulated server: it would change how its arrivals batch.
      expect(before.event_loop_delay_ms).toBeNull();
      expect(before.step_lateness_ms.steps).toBe(5);
      expect((await fetch(`${server.url}${HARNESS_PATH}`, { method: 'DELETE', headers: controlTokenHeaders() })).status).toBe(204);
      expect((await health()).step_lateness_ms.steps).toBe(0);
      await generate();
      expect((await health()).step_lateness_ms.steps).toBe(5);
      expect((await fetch(`${server.url}${HARNESS_PATH}`, { method: 'POST', headers: controlTokenHeaders() })).status).toBe(405);
    } finally {
      await server.close();
    }
  });
});
