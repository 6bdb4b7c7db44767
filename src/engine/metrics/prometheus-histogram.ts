/** A cumulative Prometheus histogram (le buckets, sum, count) rendered in the text exposition format. */
export class PrometheusHistogram {
  readonly name: string;
  readonly help: string;
  readonly #bounds: readonly number[];
  readonly #counts: Float64Array;
  #sum = 0;
  #count = 0;

  constructor(name: string, help: string, bounds: readonly number[]) {
    this.name = name;
    this.help = help;
    this.#bounds = bounds;
    this.#counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    this.#sum += value;
    this.#count++;
    for (let index = 0; index < this.#bounds.length; index++) {
      if (value <= (this.#bounds[index] as number)) {
        this.#counts[index] = (this.#counts[index] as number) + 1;
        break;
      }
    }
  }

  get count(): number {
    return this.#count;
  }

  render(labels: string): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    let cumulative = 0;
    for (let index = 0; index < this.#bounds.length; index++) {
      cumulative += this.#counts[index] as number;
      lines.push(`${this.name}_bucket{${labels},le="${formatBound(this.#bounds[index] as number)}"} ${cumulative}`);
    }
    lines.push(`${this.name}_bucket{${labels},le="+Inf"} ${this.#count}`);
    lines.push(`${this.name}_sum{${labels}} ${this.#sum}`);
    lines.push(`${this.name}_count{${labels}} ${this.#count}`);
    return lines.join('\n');
  }
}

/** Python's prometheus_client writes bounds as floats ("1.0", "0.005"). */
function formatBound(bound: number): string {
  return Number.isInteger(bound) ? `${bound}.0` : String(bound);
}
