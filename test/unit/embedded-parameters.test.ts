import { describe, expect, it } from 'vitest';
import { bindParameters, literalOf, quoteString } from '../../src/stores/embedded-parameters.js';

describe('statement parameters bound before the embedded engine', () => {
  it('quotes strings so that only the engine reads their text', () => {
    expect(quoteString("it's")).toBe("'it\\'s'");
    expect(quoteString('a\\b')).toBe("'a\\\\b'");
    expect(quoteString("\\'; DROP TABLE spans; --")).toBe("'\\\\\\'; DROP TABLE spans; --'");
    expect(quoteString('nul\0tab\tline\nret\r')).toBe("'nul\\0tab\\tline\\nret\\r'");
    expect(quoteString('ü 🙂')).toBe("'ü 🙂'");
  });

  it('writes numbers, big integers, booleans, dates, null and arrays as literals', () => {
    expect(literalOf(51)).toBe('51');
    expect(literalOf(-0.25)).toBe('-0.25');
    expect(literalOf(1e21)).toBe('1e+21');
    expect(literalOf(Number.NaN)).toBe('nan');
    expect(literalOf(-Infinity)).toBe('-inf');
    expect(literalOf(18446744073709551615n)).toBe('18446744073709551615');
    expect(literalOf(true)).toBe('true');
    expect(literalOf(null)).toBe('NULL');
    expect(literalOf(new Date('2026-03-01T10:03:04.005Z'))).toBe("'2026-03-01 10:03:04.005'");
    expect(literalOf(['a', "b'c"])).toBe("['a', 'b\\'c']");
    expect(literalOf([])).toBe('[]');
    expect(literalOf({ a: 1, "b'": ['x'] })).toBe("map('a', 1, 'b\\'', ['x'])");
    expect(() => literalOf(new Map())).toThrow(/cannot be bound/);
  });

  it('replaces each placeholder by the typed value the engine would bind', () => {
    expect(
      bindParameters(
        "SELECT 1 FROM t WHERE a = {a:String} AND b IN {ids:Array(String)} AND c < {c:DateTime64(6, 'UTC')} LIMIT {n:UInt32}",
        {
          a: 'x',
          ids: ['p', 'q'],
          c: '2026-03-01 10:00:00.000000',
          n: 51,
        },
      ),
    ).toBe(
      "SELECT 1 FROM t WHERE a = _CAST('x', 'String') AND b IN _CAST(['p', 'q'], 'Array(String)') AND c < _CAST('2026-03-01 10:00:00.000000', 'DateTime64(6, \\'UTC\\')') LIMIT _CAST(51, 'UInt32')",
    );
    expect(bindParameters('SELECT { a : UInt8 } + {a:UInt8}', { a: 2 })).toBe("SELECT _CAST(2, 'UInt8') + _CAST(2, 'UInt8')");
  });

  it('leaves placeholders in strings, quoted names and comments as text', () => {
    const sql = `SELECT '{a:String}' AS "{a:String}", \`{a:String}\`, 'it''s {a:String}', 'x\\'{a:String}' -- {a:String}
      /* {a:String} */ , {a:String}`;
    const bound = bindParameters(sql, { a: 'v' });
    expect(bound.split("_CAST('v', 'String')")).toHaveLength(2);
    expect(bound.endsWith(", _CAST('v', 'String')")).toBe(true);
    expect(bindParameters("SELECT '{}', {x}, map('k', 1)", {})).toBe("SELECT '{}', {x}, map('k', 1)");
  });

  it('fails on a placeholder without a value, an identifier, or a statement cut short', () => {
    expect(() => bindParameters('SELECT {a:String}', {})).toThrow(/a has no value/);
    expect(() => bindParameters('SELECT {a:String}', { a: undefined })).toThrow(/a has no value/);
    expect(() => bindParameters('SELECT * FROM {t:Identifier}', { t: 'spans' })).toThrow(/identifier/);
    // Callers' SQL: a name, each part of a compound one quoted, as the engine reads the value.
    expect(bindParameters('SELECT * FROM {t:Identifier}', { t: 'system.ta`bles' }, { identifiers: true })).toBe(
      'SELECT * FROM `system`.`ta\\`bles`',
    );
    expect(() => bindParameters('SELECT {t:Identifier}', { t: 1 }, { identifiers: true })).toThrow(/must be a name/);
    expect(() => bindParameters("SELECT 'open", {})).toThrow(/unterminated/);
    expect(() => bindParameters('SELECT 1 /* open', {})).toThrow(/unterminated/);
  });
});
