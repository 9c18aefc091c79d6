import { AppError } from '../http/wire/errors.js';

/**
 * `npx loupe sql "SELECT …"`: runs one query through a running service's POST /api/sql (the
 * same confinement and limits as any client) and prints the answer as a table, or the file of
 * `--csv` / `--format` as it comes.
 */
export interface SqlCommand {
  baseUrl: string;
  apiKey: string | undefined;
  query: string;
  format: 'table' | 'csv' | 'jsonl';
  /** `--param name=value`: every value is sent as a string; the query's placeholder type converts it. */
  parameters: string[];
  workspaceId?: string | undefined;
}

export function parseParameters(pairs: string[]): Record<string, string> {
  const parameters: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new AppError('VALIDATION_ERROR', `--param takes name=value, not ${pair}`);
    parameters[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return parameters;
}

/** A cell as text: strings as they are, anything else as JSON, long values cut. */
function cell(value: unknown, width = 60): string {
  const text = (typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null')).replace(/\s+/g, ' ');
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

export function formatTable(columns: Array<{ name: string }>, rows: unknown[][]): string {
  const cells = rows.map((row) => row.map((value) => cell(value)));
  const widths = columns.map((c, i) => Math.max(c.name.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join(' | ')
      .trimEnd();
  return [line(columns.map((c) => c.name)), widths.map((w) => '-'.repeat(w)).join('-+-'), ...cells.map(line)].join('\n');
}

/** Runs the command; answers the exit code (0, or 1 with the service's error on stderr). */
export async function runSqlCommand(command: SqlCommand, out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  if (!command.apiKey) throw new AppError('VALIDATION_ERROR', 'Set LOUPE_API_KEY to a key of the workspace to query');
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-api-key': command.apiKey };
  if (command.workspaceId) headers['x-workspace-id'] = command.workspaceId;
  const format = command.format === 'table' ? 'json' : command.format;
  const res = await fetch(new URL('/api/sql', command.baseUrl), {
    method: 'POST',
    headers,
    body: JSON.stringify({ query: command.query, parameters: parseParameters(command.parameters), format }),
  });
  const body = await res.text();
  if (res.status !== 200) {
    let message = body;
    try {
      const { error } = JSON.parse(body) as { error: { code: string; message: string } };
      message = `${error.code}: ${error.message}`;
    } catch {
      // not the envelope: print the body as it is
    }
    err.write(`${res.status} ${message}\n`);
    return 1;
  }
  if (format !== 'json') {
    out.write(body);
    return 0;
  }
  const { data, meta } = JSON.parse(body) as {
    data: { columns: Array<{ name: string }>; rows: unknown[][] };
    meta: { statistics: { rowsRead: number; bytesRead: number; elapsedMs: number } };
  };
  out.write(`${formatTable(data.columns, data.rows)}\n`);
  const s = meta.statistics;
  err.write(`${data.rows.length} rows; read ${s.rowsRead} rows, ${s.bytesRead} bytes in ${s.elapsedMs.toFixed(1)} ms\n`);
  return 0;
}
