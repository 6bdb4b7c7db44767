/** `cache-aware`, `Cache_Aware` and `cache_aware` are one name to a reader: compare names with case and -/_ folded. */
function folded(name: string): string {
  return name.toLowerCase().replace(/-/g, '_');
}

/** Edit distance (insertions, deletions, substitutions) between two short names, one row at a time. */
export function editDistance(from: string, to: string): number {
  let previous = Array.from({ length: to.length + 1 }, (_, index) => index);
  for (let row = 1; row <= from.length; row++) {
    const current = [row];
    for (let column = 1; column <= to.length; column++) {
      const substitution = (previous[column - 1] as number) + (from[row - 1] === to[column - 1] ? 0 : 1);
      current[column] = Math.min(substitution, (previous[column] as number) + 1, (current[column - 1] as number) + 1);
    }
    previous = current;
  }
  return previous[to.length] as number;
}

/**
 * The allowed value closest to a mistyped one, or undefined when none is close (more than a third of its letters
 * differ): a suggestion must be a likely intent, not merely the least unlike.
 */
export function closestName(given: string, allowed: readonly string[]): string | undefined {
  const target = folded(given);
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of allowed) {
    const gap = editDistance(target, folded(candidate));
    if (gap < bestDistance) {
      best = candidate;
      bestDistance = gap;
    }
  }
  return best !== undefined && bestDistance <= Math.max(1, Math.floor(target.length / 3)) ? best : undefined;
}

/** ` Did you mean "cache_aware"?`, or an empty string when nothing is close. */
export function didYouMean(given: string, allowed: readonly string[]): string {
  const closest = closestName(given, allowed);
  return closest === undefined ? '' : ` Did you mean "${closest}"?`;
}
