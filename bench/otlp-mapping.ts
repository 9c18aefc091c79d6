/**
 * The mapping's CPU per span, this tree against a baseline tree, in one run:
 * `npm run bench -- otlp --mapping [--baseline <commit or directory>] [--rounds 20]`.
 *
 * The baseline is another checkout's normalize.ts (`normalizePaths`; a directory), or the
 * given commit's source exported to a temporary directory (default: `HEAD~1`). Both trees map
 * the same decoded requests: the corpus of real instrumentations' exports, spans written in the
 * conventions of real traffic (LangSmith, Mastra, LangChain metadata, exception events, cache
 * writes, system prompts sent twice), and the generated GenAI exports of the throughput bench.
 * Rounds alternate the two trees (and which goes first), so load on the machine weighs on both.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { decodeJsonRequest, parseOtlpJson } from '../src/traces/ingest/otlp/wire/json.js';
import type { PlainExportRequest } from '../src/traces/ingest/otlp/wire/model.js';
import { normalizeExport } from '../src/traces/ingest/otlp/mapping/normalize.js';
import { decodeProtobufRequest, encodeProtobufRequest } from '../src/traces/ingest/otlp/wire/protobuf.js';
import { conventionsRequest } from './otlp-conventions-data.js';
import { exportRequest } from './otlp-data.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const corpusDir = process.env.LOUPE_OTLP_CORPUS ?? path.resolve(root, '../shared/otlp-corpus');

type Normalize = (request: PlainExportRequest) => { spanCount: number };

/** Where normalize.ts is in a tree: the layered one first, then the flat ones before it. */
const normalizePaths = [
  'src/traces/ingest/otlp/mapping/normalize.ts',
  'src/traces/ingest/otlp/normalize.ts',
  'src/traces/otlp/normalize.ts',
];

/** The baseline's normalizeExport: from a directory holding a checkout, or a commit exported to one. */
async function baselineNormalize(spec: string): Promise<{ normalize: Normalize; label: string; cleanup: () => void }> {
  let dir = spec;
  let cleanup = () => {};
  if (!normalizePaths.some((file) => existsSync(path.join(spec, file)))) {
    dir = mkdtempSync(path.join(tmpdir(), 'loupe-bench-baseline-'));
    const archive = execFileSync('git', ['-C', root, 'archive', '--format=tar', spec, 'src', 'packages/sdk/src'], { maxBuffer: 1 << 30 });
    execFileSync('tar', ['-x', '-C', dir], { input: archive });
    // The baseline's imports (zod, the price table) resolve to this tree's packages.
    symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    const created = dir;
    cleanup = () => rmSync(created, { recursive: true, force: true });
  }
  const file = normalizePaths.find((candidate) => existsSync(path.join(dir, candidate))) ?? normalizePaths[0]!;
  const module = (await import(pathToFileURL(path.join(dir, file)).href)) as { normalizeExport: Normalize };
  return { normalize: module.normalizeExport, label: spec, cleanup };
}

function decodeJson(body: Buffer): PlainExportRequest {
  const decoded = decodeJsonRequest(parseOtlpJson(body.toString('utf8')));
  if (!decoded.ok) throw new Error(JSON.stringify(decoded.issues));
  return decoded.request;
}

/** Every trace export of the corpus, as the route decodes it. */
function corpusRequests(): PlainExportRequest[] {
  const requests: PlainExportRequest[] = [];
  if (!existsSync(corpusDir)) return requests;
  for (const dir of readdirSync(corpusDir, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    for (const file of readdirSync(path.join(corpusDir, dir.name)).filter((f) => f.endsWith('.meta.json'))) {
      const meta = JSON.parse(readFileSync(path.join(corpusDir, dir.name, file), 'utf8')) as {
        path: string;
        contentType: string;
        contentEncoding: string | null;
      };
      if (!meta.path.endsWith('/v1/traces') || meta.contentEncoding) continue;
      const body = readFileSync(path.join(corpusDir, dir.name, file.replace('.meta.json', '.body')));
      requests.push(meta.contentType.includes('json') ? decodeJson(body) : decodeProtobufRequest(body));
    }
  }
  return requests;
}

const spansOf = (requests: PlainExportRequest[]) =>
  requests.reduce(
    (n, r) => n + (r.resourceSpans ?? []).reduce((m, rs) => m + (rs.scopeSpans ?? []).reduce((k, ss) => k + (ss.spans?.length ?? 0), 0), 0),
    0,
  );

/** CPU microseconds (user + system) per span of one pass of `normalize` over `requests`. */
function cpuPerSpan(normalize: Normalize, requests: PlainExportRequest[], spans: number, passes: number): number {
  const before = process.cpuUsage();
  for (let p = 0; p < passes; p++) for (const request of requests) normalize(request);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / passes / spans;
}

export async function runMapping(args: string[]) {
  const option = (name: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const rounds = Number(option('rounds') ?? 20);
  if (!Number.isInteger(rounds) || rounds <= 0) throw new Error('--rounds must be a positive whole number');
  const baseline = await baselineNormalize(option('baseline') ?? 'HEAD~1');
  try {
    const corpora: [string, PlainExportRequest[]][] = [
      ['corpus of real instrumentations', corpusRequests()],
      ['conventions of real traffic', Array.from({ length: 8 }, (_, r) => decodeJson(Buffer.from(JSON.stringify(conventionsRequest(r)))))],
      ['generated GenAI exports', Array.from({ length: 8 }, (_, r) => decodeProtobufRequest(encodeProtobufRequest(exportRequest(1, r))))],
    ];
    const lines = [`mapping CPU per span (normalizeExport, user+system), ${rounds} alternating rounds; baseline ${baseline.label}:`];
    for (const [name, requests] of corpora) {
      const spans = spansOf(requests);
      if (spans === 0) continue;
      // About 20 ms of work per timed pass, whatever the corpus' size.
      const passes = Math.max(1, Math.round(20_000 / (cpuPerSpan(normalizeExport, requests, spans, 1) * spans)));
      cpuPerSpan(baseline.normalize, requests, spans, passes);
      let current = 0;
      let old = 0;
      for (let r = 0; r < rounds; r++) {
        if (r % 2 === 0) {
          old += cpuPerSpan(baseline.normalize, requests, spans, passes);
          current += cpuPerSpan(normalizeExport, requests, spans, passes);
        } else {
          current += cpuPerSpan(normalizeExport, requests, spans, passes);
          old += cpuPerSpan(baseline.normalize, requests, spans, passes);
        }
      }
      lines.push(
        `  ${name} (${spans} spans in ${requests.length} requests): this tree ${(current / rounds).toFixed(2)} µs, baseline ${(old / rounds).toFixed(2)} µs, ratio ${((100 * current) / old).toFixed(0)}% (goal <= 110%)`,
      );
    }
    console.log(lines.join('\n'));
  } finally {
    baseline.cleanup();
  }
}
