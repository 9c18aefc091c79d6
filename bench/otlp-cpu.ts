/**
 * The bridge's own CPU per export, in this process, without the service:
 * `npm run bench -- otlp --cpu [--exports 50]`.
 *
 * The bench's generated exports (512 GenAI spans each) go through what the OTLP route does
 * before the store (protobuf decode, mapping, validation, row building) and, for comparison,
 * the same spans as native JSON through what POST /api/traces does (parse, body schema, per-trace
 * validation, row building). The corpus of real instrumentations' requests is timed the same
 * way. Figures are CPU time (user + system) per export, so other load on the machine weighs
 * less than on wall-clock rates; each stage is timed over all exports after a warm-up pass.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { repairLoneSurrogates } from '../src/http/wire/json-bounds.js';
import { ingestBodySchema, traceSchema, type Trace } from '../src/traces/model/schemas.js';
import { toSpanRows } from '../src/traces/ingest/ingest.js';
import { validateTraces } from '../src/traces/ingest/otlp/mapping/validate.js';
import { decodeJsonRequest, parseOtlpJson } from '../src/traces/ingest/otlp/wire/json.js';
import type { PlainExportRequest } from '../src/traces/ingest/otlp/wire/model.js';
import { normalizeExport, type SpanRejection } from '../src/traces/ingest/otlp/mapping/normalize.js';
import { decodeProtobufRequest, encodeProtobufRequest } from '../src/traces/ingest/otlp/wire/protobuf.js';
import { exportRequest, spansPerRequest } from './otlp-data.js';

const corpusDir = process.env.LOUPE_OTLP_CORPUS ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../shared/otlp-corpus');

/** CPU milliseconds `work` takes for each item, after one untimed pass. */
function cpuMs<T, R>(items: T[], work: (item: T) => R, rounds: number): { ms: number; out: R[] } {
  let out = items.map(work);
  const before = process.cpuUsage();
  for (let r = 0; r < rounds; r++) out = items.map(work);
  const used = process.cpuUsage(before);
  return { ms: (used.user + used.system) / 1000 / rounds / items.length, out };
}

interface Stages {
  name: string;
  stages: [string, number][];
}

function otlpStages(bodies: { body: Buffer; json: boolean }[], rounds: number): Stages {
  const decoded = cpuMs(bodies, ({ body, json }) => (json ? decodeJsonOrThrow(body) : decodeProtobufRequest(body)), rounds);
  // The mapping and validation change what they are given (repairs in place): each pass gets a fresh decode.
  const fresh = () => bodies.map(({ body, json }) => (json ? decodeJsonOrThrow(body) : decodeProtobufRequest(body)));
  let inputs = fresh();
  const mapped = cpuMs(inputs, (r) => normalizeExport(r), rounds);
  const validated = cpuMs(mapped.out, (n) => validateTraces(n.traces, [] as SpanRejection[]), rounds);
  const rows = cpuMs(validated.out, (traces) => toSpanRows('w', traces), rounds);
  inputs = fresh();
  const whole = cpuMs(inputs, (r) => toSpanRows('w', validateTraces(normalizeExport(r).traces, [])), rounds);
  return {
    name: '',
    stages: [
      ['decode', decoded.ms],
      ['map', mapped.ms],
      ['validate', validated.ms],
      ['rows', rows.ms],
      ['map+validate+rows', whole.ms],
    ],
  };
}

function decodeJsonOrThrow(body: Buffer): PlainExportRequest {
  const decoded = decodeJsonRequest(parseOtlpJson(body.toString('utf8')));
  if (!decoded.ok) throw new Error(JSON.stringify(decoded.issues));
  return decoded.request;
}

function nativeStages(bodies: Buffer[], rounds: number): Stages {
  const parsed = cpuMs(bodies, (b) => ingestBodySchema.parse(JSON.parse(b.toString('utf8'))), rounds);
  const validated = cpuMs(parsed.out, (p) => p.traces.map((t) => traceSchema.parse(repairLoneSurrogates(t))), rounds);
  const rows = cpuMs(validated.out, (traces: Trace[]) => toSpanRows('w', traces), rounds);
  return {
    name: '',
    stages: [
      ['parse', parsed.ms],
      ['validate', validated.ms],
      ['rows', rows.ms],
    ],
  };
}

function corpusBodies() {
  const bodies: { body: Buffer; json: boolean }[] = [];
  for (const dir of readdirSync(corpusDir, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    for (const file of readdirSync(path.join(corpusDir, dir.name)).filter((f) => f.endsWith('.meta.json'))) {
      const meta = JSON.parse(readFileSync(path.join(corpusDir, dir.name, file), 'utf8')) as {
        path: string;
        contentType: string;
        contentEncoding: string | null;
      };
      if (!meta.path.endsWith('/v1/traces') || meta.contentEncoding) continue;
      bodies.push({
        body: readFileSync(path.join(corpusDir, dir.name, file.replace('.meta.json', '.body'))),
        json: meta.contentType.includes('json'),
      });
    }
  }
  return bodies;
}

const show = (stages: [string, number][]) => stages.map(([name, ms]) => `${name} ${ms.toFixed(2)} ms`).join(', ');

export function runCpu(args: string[]) {
  const i = args.indexOf('--exports');
  const exports = i >= 0 ? Number(args[i + 1]) : 50;
  if (!Number.isInteger(exports) || exports <= 0) throw new Error('--exports must be a positive whole number');
  const rounds = 3;
  const protobuf = Array.from({ length: exports }, (_, r) => ({ body: encodeProtobufRequest(exportRequest(1, r)), json: false }));
  const native = Array.from({ length: exports }, (_, r) =>
    Buffer.from(JSON.stringify({ traces: normalizeExport(decodeProtobufRequest(encodeProtobufRequest(exportRequest(0, r)))).traces })),
  );
  const otlp = otlpStages(protobuf, rounds);
  const nat = nativeStages(native, rounds);
  const corpus = corpusBodies();
  const corpusRounds = Math.max(3, Math.ceil((exports * rounds * spansPerRequest) / 40 / Math.max(1, corpus.length) / 10));
  const real = otlpStages(corpus, corpusRounds);
  const sum = (s: [string, number][], names: string[]) => s.filter(([n]) => names.includes(n)).reduce((a, [, ms]) => a + ms, 0);
  console.log(
    [
      `CPU per export (user+system), ${exports} generated exports of ${spansPerRequest} spans, ${rounds} timed passes each:`,
      `  OTLP protobuf: ${show(otlp.stages)}`,
      `    bridge before the store (decode+map+validate+rows): ${sum(otlp.stages, ['decode', 'map', 'validate', 'rows']).toFixed(2)} ms`,
      `  native JSON:   ${show(nat.stages)}`,
      `    native before the store (parse+validate+rows):       ${sum(nat.stages, ['parse', 'validate', 'rows']).toFixed(2)} ms`,
      `corpus: ${corpus.length} trace exports of real instrumentations, ${corpusRounds} timed passes, CPU per export:`,
      `  ${show(real.stages)}`,
    ].join('\n'),
  );
}
