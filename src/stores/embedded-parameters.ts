/**
 * The service's statement parameters bound before the embedded engine sees them (decision 084).
 *
 * The embedded engine's library runs statements with parameters one at a time across the whole
 * process, every session together: the library sets and clears a statement's parameters in
 * state its sessions share, so it chains every parameterized statement behind the one before.
 * A read then waited for the writer's key reads (up to half a second under a small-payload
 * ingest), though its session is its own. Statements without parameters run side by side.
 *
 * So the service's own sessions send their statements with each `{name:Type}` placeholder
 * replaced by what the engine itself puts there, `_CAST(<literal>, '<Type>')`, the literal
 * written from the value: the same statement, typed the same way, parsed and checked by the
 * engine as before, and the text of every value quoted as the engine reads it (the `\` and `'`
 * that could end a string escaped, control characters written as escapes). A ClickHouse
 * server keeps binding on its side (stores/clickhouse.ts); so does the SQL endpoint's session,
 * whose statements hold callers' text.
 */

const escapes: Record<string, string> = {
  '\\': '\\\\',
  "'": "\\'",
  '\0': '\\0',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

/** A string as a single-quoted ClickHouse literal. */
export function quoteString(value: string): string {
  return `'${value.replace(/[\\'\0\b\f\n\r\t]/g, (c) => escapes[c]!)}'`;
}

/** A value as a ClickHouse literal: strings, numbers, bigints, booleans, dates, null, and arrays and maps (plain objects) of them. */
export function literalOf(value: unknown): string {
  if (value === null) return 'NULL';
  if (typeof value === 'string') return quoteString(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'nan';
    if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
    return String(value);
  }
  // 'YYYY-MM-DD hh:mm:ss.mmm' in UTC, as the engine reads a time.
  if (value instanceof Date) return quoteString(value.toISOString().slice(0, 23).replace('T', ' '));
  if (Array.isArray(value)) return `[${value.map(literalOf).join(', ')}]`;
  // A JSON object, for a Map parameter: map(key, value, …).
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const entries = Object.entries(value as Record<string, unknown>).flatMap(([key, item]) => [quoteString(key), literalOf(item)]);
    return `map(${entries.join(', ')})`;
  }
  throw new Error(`A statement parameter of type ${typeof value} cannot be bound here`);
}

/**
 * Where a `{name:Type}` placeholder starts at `at` (a `{` outside strings and comments), its
 * name, type and end; undefined when the brace starts something else.
 */
function placeholderAt(sql: string, at: number): { name: string; type: string; end: number } | undefined {
  const head = /^\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*/.exec(sql.slice(at, at + 200));
  if (!head) return undefined;
  let depth = 0;
  for (let i = at + head[0].length; i < sql.length; i++) {
    const c = sql[i];
    if (c === "'") {
      i = endOfQuoted(sql, i, "'");
    } else if (c === '(') {
      depth++;
    } else if (c === ')') {
      depth--;
    } else if (c === '}' && depth === 0) {
      const type = sql.slice(at + head[0].length, i).trim();
      return type === '' ? undefined : { name: head[1]!, type, end: i + 1 };
    } else if (c === '{' || c === ';') {
      return undefined;
    }
  }
  return undefined;
}

/** The index of the quote closing the quoted text that opens at `at` (backslash escapes and doubled quotes inside). */
function endOfQuoted(sql: string, at: number, quote: string): number {
  for (let i = at + 1; i < sql.length; i++) {
    if (sql[i] === '\\') i++;
    else if (sql[i] === quote) {
      if (sql[i + 1] === quote) i++;
      else return i;
    }
  }
  throw new Error('A statement has an unterminated quoted string');
}

/**
 * A name as back-quoted ClickHouse identifiers (`\` and the back quote escaped), each part of a
 * compound name (`db.table`) on its own, as the engine reads an Identifier parameter's value.
 */
export function quoteIdentifier(name: string): string {
  return name
    .split('.')
    .map((part) => `\`${part.replace(/[\\`]/g, (c) => `\\${c}`)}\``)
    .join('.');
}

/**
 * The statement with every placeholder replaced by its value, typed as the engine types a
 * bound parameter. Placeholders in string literals, quoted names and comments are text, as
 * they are to the engine. A placeholder without a value fails; so does one of the type
 * `Identifier`, unless `identifiers` (callers' SQL, whose names the confinement check then
 * sees), where its string value becomes a quoted name.
 */
export function bindParameters(sql: string, params: Record<string, unknown>, options: { identifiers?: boolean } = {}): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i];
    if (c === "'" || c === '"' || c === '`') {
      i = endOfQuoted(sql, i, c);
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      if (end < 0) throw new Error('A statement has an unterminated comment');
      i = end + 1;
    } else if (c === '{') {
      const placeholder = placeholderAt(sql, i);
      if (!placeholder) continue;
      const { name, type, end } = placeholder;
      if (!Object.hasOwn(params, name) || params[name] === undefined) throw new Error(`The statement parameter ${name} has no value`);
      const value = params[name];
      if (type === 'Identifier') {
        if (!options.identifiers) throw new Error(`The statement parameter ${name} is an identifier, which is not bound here`);
        if (typeof value !== 'string' || value === '')
          throw new Error(`The statement parameter ${name} is an identifier: its value must be a name`);
        out += `${sql.slice(from, i)}${quoteIdentifier(value)}`;
      } else {
        out += `${sql.slice(from, i)}_CAST(${literalOf(value)}, ${quoteString(type)})`;
      }
      from = end;
      i = end - 1;
    }
  }
  return out + sql.slice(from);
}
