/**
 * Ordinary least squares through the normal equations (A^T A) x = A^T y, solved by Gaussian elimination with partial
 * pivoting. The calibration fits at most six coefficients to a few dozen rows, so nothing heavier is needed; columns
 * listed in `fixedZero` are held at zero (for a non-negative fit by elimination).
 */
export function leastSquares(rows: readonly number[][], targets: readonly number[], fixedZero: ReadonlySet<number> = new Set()): number[] | null {
  const width = rows[0]?.length ?? 0;
  const free = Array.from({ length: width }, (_unused, column) => column).filter((column) => !fixedZero.has(column));
  const size = free.length;
  if (size === 0 || rows.length < size) return null;
  const matrix: number[][] = Array.from({ length: size }, () => new Array<number>(size + 1).fill(0));
  rows.forEach((row, rowIndex) => {
    const target = targets[rowIndex] as number;
    for (let i = 0; i < size; i++) {
      const valueI = row[free[i] as number] as number;
      for (let j = 0; j < size; j++) (matrix[i] as number[])[j] = ((matrix[i] as number[])[j] as number) + valueI * (row[free[j] as number] as number);
      (matrix[i] as number[])[size] = ((matrix[i] as number[])[size] as number) + valueI * target;
    }
  });
  for (let pivot = 0; pivot < size; pivot++) {
    let best = pivot;
    for (let row = pivot + 1; row < size; row++) {
      if (Math.abs((matrix[row] as number[])[pivot] as number) > Math.abs((matrix[best] as number[])[pivot] as number)) best = row;
    }
    if (Math.abs((matrix[best] as number[])[pivot] as number) < 1e-300) return null;
    [matrix[pivot], matrix[best]] = [matrix[best] as number[], matrix[pivot] as number[]];
    const pivotRow = matrix[pivot] as number[];
    for (let row = 0; row < size; row++) {
      if (row === pivot) continue;
      const current = matrix[row] as number[];
      const factor = (current[pivot] as number) / (pivotRow[pivot] as number);
      if (factor === 0) continue;
      for (let column = pivot; column <= size; column++) current[column] = (current[column] as number) - factor * (pivotRow[column] as number);
    }
  }
  const solution = new Array<number>(width).fill(0);
  free.forEach((column, index) => {
    const row = matrix[index] as number[];
    solution[column] = (row[size] as number) / (row[index] as number);
  });
  return solution;
}

/** Least squares with every coefficient >= 0: drop the most negative one to zero and refit, until none is negative. */
export function nonNegativeLeastSquares(rows: readonly number[][], targets: readonly number[]): number[] | null {
  // A column no row uses (e.g. no decode step left the floor) cannot be estimated: hold it at zero.
  const width = rows[0]?.length ?? 0;
  const fixedZero = new Set<number>();
  for (let column = 0; column < width; column++) if (rows.every((row) => row[column] === 0)) fixedZero.add(column);
  for (;;) {
    const solution = leastSquares(rows, targets, fixedZero);
    if (solution === null) return null;
    let worst = -1;
    solution.forEach((value, column) => {
      if (value < 0 && (worst < 0 || value < (solution[worst] as number))) worst = column;
    });
    if (worst < 0) return solution;
    fixedZero.add(worst);
  }
}
