import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { checkConfinement, ConfinementError, parseExplainAst } from '../../src/sql/confine.js';
import { limitError, limitSettings } from '../../src/sql/limits.js';
import { cleanEngineMessage } from '../../src/sql/query.js';
import { stringMapOf } from '../../src/traces/ingest/ingest.js';

const rules = { views: ['spans', 'traces'] };

/** EXPLAIN AST lines as the engine prints them (indent = depth). */
const tree = (text: string) => parseExplainAst(text.split('\n'));

const select = (tables: string, extra = '') => `SelectWithUnionQuery (children 1)
 ExpressionList (children 1)
  SelectQuery (children 2)
   ExpressionList (children 1)
    Asterisk
   TablesInSelectQuery (children 1)
    TablesInSelectQueryElement (children 1)
     TableExpression (children 1)
${tables}${extra}`;

function refusal(text: string): ConfinementError {
  try {
    checkConfinement(tree(text), rules);
  } catch (error) {
    if (error instanceof ConfinementError) return error;
    throw error;
  }
  throw new Error('not refused');
}

describe('parseExplainAst', () => {
  it('nests lines by indentation and keeps names and aliases', () => {
    const root = tree(select('      TableIdentifier spans (alias s)'));
    expect(root.type).toBe('SelectWithUnionQuery');
    const table = root.children[0]!.children[0]!.children[1]!.children[0]!.children[0]!.children[0]!;
    expect(table).toEqual({ type: 'TableIdentifier', text: 'spans (alias s)', children: [] });
  });

  it('refuses anything but one tree', () => {
    expect(() => parseExplainAst([])).toThrow(ConfinementError);
    expect(() => parseExplainAst(['SelectWithUnionQuery', 'SelectWithUnionQuery'])).toThrow(/exactly one/);
  });
});

describe('checkConfinement', () => {
  it('lets the views, CTE names and system.one through', () => {
    expect(() => checkConfinement(tree(select('      TableIdentifier spans')), rules)).not.toThrow();
    expect(() => checkConfinement(tree(select('      TableIdentifier my_cte')), rules)).not.toThrow();
    expect(() => checkConfinement(tree(select('      TableIdentifier system.one')), rules)).not.toThrow();
  });

  it('refuses tables with a database, table functions, SETTINGS and unknown constructs', () => {
    expect(refusal(select('      TableIdentifier system.tables')).message).toMatch(/system\.tables is out of reach/);
    expect(refusal(select('      TableIdentifier loupe.spans')).kind).toBe('forbidden');
    expect(
      refusal(select("      Function file (children 1)\n       ExpressionList (children 1)\n        Literal '/etc/passwd'")).message,
    ).toMatch(/Table function file/);
    expect(refusal(select('      TableIdentifier spans', '\n   Set')).message).toMatch(/SETTINGS are not allowed/);
    expect(refusal('InsertQuery (children 1)\n Identifier spans').message).toMatch(/Only a SELECT/);
    expect(refusal(select('      TableIdentifier spans', '\n   ExplainQuery')).message).toMatch(/ExplainQuery is not allowed/);
  });

  it('refuses functions that reach past the query by name, in any case', () => {
    const withFunction = (name: string) => `SelectWithUnionQuery (children 1)
 ExpressionList (children 1)
  SelectQuery (children 1)
   ExpressionList (children 1)
    Function ${name} (children 1)
     ExpressionList (children 1)
      Literal 'x'`;
    for (const name of [
      'dictGet',
      'DICTGETSTRING',
      'joinGet',
      'file',
      'hasColumnInTable',
      'getSetting',
      'currentUser',
      'hostName',
      '__getScalar',
    ]) {
      expect(refusal(withFunction(name)).message, name).toMatch(/is not allowed/);
    }
    for (const name of ['sum', 'JSONExtractString', 'arrayJoin', '_CAST', 'quantileExact', 'mapKeys']) {
      expect(() => checkConfinement(tree(withFunction(name)), rules), name).not.toThrow();
    }
  });

  it('treats the right side of IN as a table when it is a bare name', () => {
    const inTable = (name: string) => `SelectWithUnionQuery (children 1)
 ExpressionList (children 1)
  SelectQuery (children 1)
   ExpressionList (children 1)
    Function globalNotIn (children 1)
     ExpressionList (children 2)
      Identifier trace_id
      Identifier ${name}`;
    expect(refusal(inTable('system.users')).message).toMatch(/out of reach/);
    expect(() => checkConfinement(tree(inTable('traces')), rules)).not.toThrow();
  });
});

describe('limits', () => {
  const config = loadConfig({ LOUPE_SQL_MAX_EXECUTION_MS: '1500', LOUPE_SQL_MAX_RESULT_ROWS: '7' });

  it('become the SETTINGS of the statement, read-only first', () => {
    const settings = limitSettings(config);
    expect(settings.startsWith('readonly = 1, max_execution_time = 1.5,')).toBe(true);
    expect(settings).toContain('max_result_rows = 7');
    expect(settings).toContain("result_overflow_mode = 'throw'");
  });

  it('name the variable of the limit an engine error reports', () => {
    expect(limitError('TIMEOUT_EXCEEDED', 'Timeout exceeded', config)?.details).toEqual({
      limit: 'time',
      variable: 'LOUPE_SQL_MAX_EXECUTION_MS',
      value: 1500,
    });
    expect(limitError('TOO_MANY_ROWS_OR_BYTES', 'Limit for result exceeded, max rows: 7', config)?.details.variable).toBe(
      'LOUPE_SQL_MAX_RESULT_ROWS',
    );
    expect(limitError('TOO_MANY_ROWS_OR_BYTES', 'Limit for result exceeded, max bytes: 1.00 KiB', config)?.details.variable).toBe(
      'LOUPE_SQL_MAX_RESULT_BYTES',
    );
    expect(limitError('MEMORY_LIMIT_EXCEEDED', 'x', config)?.status).toBe(422);
    expect(limitError('SYNTAX_ERROR', 'x', config)).toBeUndefined();
  });
});

describe('engine messages', () => {
  it("leave out the service's statement, other tables and the database", () => {
    expect(
      cleanEngineMessage("Unknown table expression identifier 'x' in scope SELECT * FROM x. Maybe you meant loupe.spans?. ", 'loupe'),
    ).toBe("Unknown table expression identifier 'x' in scope SELECT * FROM x");
    expect(cleanEngineMessage('Missing columns: In scope WITH spans AS (SELECT * FROM loupe.sql_spans(…)) SELECT …', 'loupe')).toBe(
      'Missing columns',
    );
    expect(cleanEngineMessage('x'.repeat(600), 'loupe')).toHaveLength(501);
  });
});

describe('stringMapOf', () => {
  it('keeps strings and writes any other value as its JSON text', () => {
    expect(stringMapOf({ a: 'x', b: 1.5, c: false, d: null, e: { f: [1, 'é'] }, g: undefined })).toEqual({
      a: 'x',
      b: '1.5',
      c: 'false',
      d: 'null',
      e: '{"f":[1,"é"]}',
    });
    expect(stringMapOf(undefined)).toEqual({});
  });
});
