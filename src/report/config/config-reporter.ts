import { join } from 'node:path';
import type { ReportContext, Reporter } from '../../types/reporter.js';
import { writeFileAtomic } from '../../utils/atomic-write.js';
import { toJson } from '../json-format.js';

export const CONFIG_JSON = 'config.json';

/** `config.json`: the resolved configuration the run used (secrets are the orchestrator's to leave out). */
export const configReporter: Reporter = {
  name: 'config',
  async write(context: ReportContext): Promise<string[]> {
    const path = join(context.outputDirectory, CONFIG_JSON);
    await writeFileAtomic(path, toJson(context.run.config));
    return [path];
  },
};
