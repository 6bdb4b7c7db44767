/** `cache-aware`, `Cache_Aware` and `cache_aware` are one name to a reader: compare names with case and -/_ folded. */
function folded(name: string): string {
  return name.toLowerCase().replace(/-/g, '_');
}

/**
 * Edit distance between two short names: insertions, deletions, substitutions, and a swap of two neighbouring letters
 * (`lmp` → `lpm`) counted as one edit, as a typist makes it.
 */
export function editDistance(from: string, to: string): number {
  const rows = from.length + 1;
  const columns = to.length + 1;
  const cost: number[][] = Array.from({ length: rows }, (_, row) => Array.from({ length: columns }, (_, column) => (row === 0 ? column : column === 0 ? row : 0)));
  const at = (row: number, column: number): number => (cost[row] as number[])[column] as number;
  for (let row = 1; row < rows; row++) {
    for (let column = 1; column < columns; column++) {
      const same = from[row - 1] === to[column - 1];
      let best = Math.min(at(row - 1, column - 1) + (same ? 0 : 1), at(row - 1, column) + 1, at(row, column - 1) + 1);
      if (row > 1 && column > 1 && from[row - 1] === to[column - 2] && from[row - 2] === to[column - 1]) best = Math.min(best, at(row - 2, column - 2) + 1);
      (cost[row] as number[])[column] = best;
    }
  }
  return at(rows - 1, columns - 1);
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
