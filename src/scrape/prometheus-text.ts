/** One sample of the Prometheus text exposition format: a series name, its labels and a value. */
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface ParsedMetrics {
  samples: MetricSample[];
  /** `# TYPE` per metric family (counter, gauge, histogram, summary, untyped). */
  types: Record<string, string>;
  /** `# HELP` per metric family. */
  help: Record<string, string>;
  /** Lines that were neither comments nor valid samples (a scrape never fails on them; they are counted). */
  invalidLines: number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;

function parseValue(text: string): number | undefined {
  switch (text) {
    case '+Inf':
    case 'Inf':
      return Number.POSITIVE_INFINITY;
    case '-Inf':
      return Number.NEGATIVE_INFINITY;
    case 'NaN':
      return Number.NaN;
    default: {
      if (text === '' || !/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return undefined;
      return Number(text);
    }
  }
}

/** Parses `{a="x",b="y\"z"}` starting at `start` (the `{`); returns the labels and the index after `}`. */
function parseLabels(line: string, start: number): { labels: Record<string, string>; end: number } | undefined {
  const labels: Record<string, string> = {};
  let index = start + 1;
  for (;;) {
    while (line[index] === ' ' || line[index] === ',') index++;
    if (line[index] === '}') return { labels, end: index + 1 };
    const nameMatch = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(index));
    if (!nameMatch) return undefined;
    const labelName = nameMatch[0];
    index += labelName.length;
    while (line[index] === ' ') index++;
    if (line[index] !== '=') return undefined;
    index++;
    while (line[index] === ' ') index++;
    if (line[index] !== '"') return undefined;
    index++;
    let value = '';
    for (;;) {
      const character = line[index];
      if (character === undefined) return undefined;
      if (character === '"') break;
      if (character === '\\') {
        const escaped = line[index + 1];
        value += escaped === 'n' ? '\n' : (escaped ?? '');
        index += 2;
        continue;
      }
      value += character;
      index++;
    }
    labels[labelName] = value;
    index++;
  }
}

function parseSample(line: string): MetricSample | undefined {
  const nameMatch = NAME.exec(line);
  if (!nameMatch) return undefined;
  const name = nameMatch[0];
  let index = name.length;
  let labels: Record<string, string> = {};
  if (line[index] === '{') {
    const parsed = parseLabels(line, index);
    if (!parsed) return undefined;
    labels = parsed.labels;
    index = parsed.end;
  }
  // Value, then an optional timestamp (ignored: samples are stamped on the run's clock when the answer arrives).
  const [valueText] = line.slice(index).trim().split(/\s+/);
  const value = parseValue(valueText ?? '');
  return value === undefined ? undefined : { name, labels, value };
}

/** Parses the Prometheus text format (version 0.0.4), as SGLang's and sglang-router's `/metrics` serve it. */
export function parsePrometheusText(text: string): ParsedMetrics {
  const parsed: ParsedMetrics = { samples: [], types: {}, help: {}, invalidLines: 0 };
  for (const rawLine of text.split('\n')) {
    const line = rawLine.trim();
    if (line === '') continue;
    if (line.startsWith('#')) {
      const comment = /^#\s*(HELP|TYPE)\s+(\S+)\s*(.*)$/.exec(line);
      if (comment) {
        const [, kind, family, rest] = comment as unknown as [string, string, string, string];
        if (kind === 'TYPE') parsed.types[family] = rest.trim();
        else parsed.help[family] = rest.replaceAll('\\n', '\n').replaceAll('\\\\', '\\');
      }
      continue;
    }
    const sample = parseSample(line);
    if (sample) parsed.samples.push(sample);
    else parsed.invalidLines++;
  }
  return parsed;
}

/** The samples of one series name (exact match), e.g. `sglang:num_running_reqs`. */
export function samplesNamed(samples: readonly MetricSample[], name: string): MetricSample[] {
  return samples.filter((sample) => sample.name === name);
}

/** Sum over every label set of one series name (e.g. over tp ranks); undefined when the series is absent. */
export function sumOfSeries(samples: readonly MetricSample[], name: string): number | undefined {
  let total: number | undefined;
  for (const sample of samples) if (sample.name === name) total = (total ?? 0) + sample.value;
  return total;
}
