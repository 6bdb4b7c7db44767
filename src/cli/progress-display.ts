import type { RunProgress } from '../orchestration/progress.js';

export type ProgressMode = 'auto' | 'bar' | 'lines' | 'off';

/**
 * Live progress on stderr (stdout stays clean for the summary). On a terminal: one line redrawn in place, at most
 * 10 times a second. Elsewhere (CI logs, pipes): a plain line every 5 seconds and at phase changes.
 */
export function createProgressDisplay(mode: ProgressMode, stream: NodeJS.WriteStream = process.stderr): { update(progress: RunProgress): void; finish(): void } {
  const useBar = mode === 'bar' || (mode === 'auto' && stream.isTTY === true);
  if (mode === 'off') return { update: () => undefined, finish: () => undefined };
  let lastDrawMs = -Infinity;
  let lastPhase: string | undefined;
  let drewBar = false;
  const intervalMs = useBar ? 100 : 5_000;
  return {
    update(progress) {
      const now = performance.now();
      const phaseChanged = progress.phase !== lastPhase;
      if (!phaseChanged && now - lastDrawMs < intervalMs && progress.phase !== 'done') return;
      lastDrawMs = now;
      lastPhase = progress.phase;
      const line = describe(progress, useBar ? Math.max(20, (stream.columns ?? 100) - 70) : 0);
      if (useBar) {
        stream.write(`\r\x1b[2K${line}`);
        drewBar = true;
      } else {
        stream.write(`${line}\n`);
      }
    },
    finish() {
      if (drewBar) stream.write('\n');
      drewBar = false;
    },
  };
}

function describe(progress: RunProgress, barWidth: number): string {
  const seconds = (progress.elapsedMs / 1000).toFixed(1);
  if (progress.phase === 'starting' || progress.phase === 'writing') return `[${seconds}s] ${progress.message ?? progress.phase}...`;
  if (progress.phase === 'warmup') return `[${seconds}s] warming up...`;
  const total = Math.max(1, progress.totalRequests);
  // `completed` counts every finished request, failed ones included.
  const finished = progress.completed;
  const fraction = Math.min(1, finished / total);
  const bar = barWidth > 0 ? `[${'#'.repeat(Math.round(fraction * barWidth)).padEnd(barWidth, '.')}] ` : '';
  const failed = progress.failed > 0 ? `, ${progress.failed} failed` : '';
  return `${bar}${finished}/${progress.totalRequests} done (${(fraction * 100).toFixed(0)}%), ${progress.sent} sent, ${progress.inFlight} in flight${failed}, ${seconds}s`;
}
