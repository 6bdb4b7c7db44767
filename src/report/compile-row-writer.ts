import { ServelabError } from '../errors/servelab-error.js';

/**
 * Builds a row writer from generated source: one statement per column, each reading its field by name
 * (`record.serverCreatedTime`). The writers run for every request of a million-request run, and a loop over column
 * descriptors reads every field through one property-access site, which V8 makes megamorphic (unrolling the JSONL
 * writer was part of a change that saved about 40% of its CPU a record); a generated body gives each field its own
 * site, as hand code does, while the column table stays the only list of fields. bench/request-writers.ts measures it.
 *
 * `bindings` are the helpers and constants the body names; everything in the body comes from servelab's own column
 * table, never from a file or the network, and field names are checked to be plain identifiers.
 */
export function compileRowWriter<Writer>(name: string, parameters: readonly string[], statements: readonly string[], bindings: Readonly<Record<string, unknown>>): Writer {
  const names = Object.keys(bindings);
  const factory = new Function(...names, `"use strict";\nreturn function ${name}(${parameters.join(', ')}) {\n${statements.join('\n')}\n};`) as (...values: unknown[]) => Writer;
  return factory(...names.map((binding) => bindings[binding]));
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `record.field` for a generated body; throws for a field name that is not a plain identifier. */
export function fieldAccess(objectName: string, field: string): string {
  if (!IDENTIFIER.test(field)) {
    throw new ServelabError('INTERNAL', `record column field "${field}" is not a plain identifier; name record fields in camelCase (src/analysis/record-columns.ts)`);
  }
  return `${objectName}.${field}`;
}
