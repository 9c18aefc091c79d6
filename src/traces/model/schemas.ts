/**
 * Wire shapes of traces and spans, as SPEC.md's tables give them, one file per kind of shape:
 * the fields and limits, a span, the ingest bodies and answer, the reads and their query
 * parameters (the files in wire/). Importers may take any of them from here.
 */
export * from './wire/field-schemas.js';
export * from './wire/span-schemas.js';
export * from './wire/ingest-schemas.js';
export * from './wire/list-schemas.js';
