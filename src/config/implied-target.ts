/**
 * A model and a GPU mean SGLang, as in the first users' framework: settings that name a model (`modelPath`) or a GPU
 * (`gpuId`) without a `target` run SGLang, never silently the simulator. An explicit `target` always wins. Takes
 * camelCase settings (after camelCaseSettings).
 */
export function impliedTarget(settings: Record<string, unknown>): Record<string, unknown> {
  if (settings['target'] !== undefined) return settings;
  if (settings['modelPath'] === undefined && settings['gpuId'] === undefined) return settings;
  return { ...settings, target: 'sglang' };
}
