/**
 * Wire shapes of traces and spans, as SPEC.md's tables give them, one file per kind of shape:
 * the fields and limits, a span, the ingest bodies and answer, the reads and their query
 * parameters. Importers may take any of them from here.
 */
export * from './field-schemas.js';
export * from './span-schemas.js';
export * from './ingest-schemas.js';
export * from './list-schemas.js';
