/**
 * Slurm's time-limit formats (sbatch --time): "minutes", "minutes:seconds", "hours:minutes:seconds", "days-hours",
 * "days-hours:minutes", "days-hours:minutes:seconds". Returns the limit in seconds, or undefined for anything else,
 * including "UNLIMITED", "INFINITE" and 0 (which Slurm reads as no limit): a submitted run always has an end.
 */
export function slurmTimeSeconds(text: string): number | undefined {
  const trimmed = text.trim();
  const withDays = /^(\d+)-(\d+)(?::(\d+))?(?::(\d+))?$/.exec(trimmed);
  let seconds: number | undefined;
  if (withDays !== null) {
    const [, days, hours, minutes, secs] = withDays;
    seconds = Number(days) * 86_400 + Number(hours) * 3_600 + Number(minutes ?? 0) * 60 + Number(secs ?? 0);
  } else if (/^\d+(?::\d+){0,2}$/.test(trimmed)) {
    const parts = trimmed.split(':').map(Number);
    if (parts.length === 1) seconds = (parts[0] as number) * 60;
    else if (parts.length === 2) seconds = (parts[0] as number) * 60 + (parts[1] as number);
    else seconds = (parts[0] as number) * 3_600 + (parts[1] as number) * 60 + (parts[2] as number);
  }
  return seconds !== undefined && seconds > 0 ? seconds : undefined;
}

/**
 * How long before the time limit Slurm warns the job (`--signal=B:TERM@<seconds>`): two minutes, or half the limit
 * when that is shorter, so a short test limit still leaves the run time to measure. The coordinator takes the warning
 * as it takes Ctrl-C: it stops sending and writes what it measured, before the limit's SIGKILL can lose records.
 */
export function earlyWarningSeconds(limitSeconds: number): number {
  return Math.max(1, Math.min(120, Math.floor(limitSeconds / 2)));
}
