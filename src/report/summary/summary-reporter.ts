import { join } from 'node:path';
import type { ReportContext, Reporter } from '../../types/reporter.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import { toJson } from '../json-format.js';
import { SUMMARY_JSON, buildSummaryFile, encodeSummaryFile } from './summary-file.js';

/** `summary.json` (format 2 names): run info (status, t0 as epoch), events and every per-experiment metric. */
export const summaryReporter: Reporter = {
  name: 'summary',
  async write(context: ReportContext): Promise<string[]> {
    const path = join(context.outputDirectory, SUMMARY_JSON);
    await writeFileAtomic(path, toJson(encodeSummaryFile(buildSummaryFile(context.run, context.summary))));
    return [path];
  },
};
