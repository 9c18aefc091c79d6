import { describe, expect, it } from 'vitest';
import { parseTraceView, sortRows, traceViewToSearch } from '../../web/src/lib/filters.js';
import { bumpVersion, compareVersions, sortVersionsDesc, templateVariables } from '../../web/src/lib/semver.js';
import { formatUsd } from '../../web/src/lib/format.js';

describe('trace list view in the URL', () => {
  it('round-trips filters, sort and page, dropping unknown keys and defaults', () => {
    const view = parseTraceView('status=error&environment=staging&bogus=1&sort=costUsd&page=3&pageSize=20');
    expect(view).toEqual({
      filters: { status: 'error', environment: 'staging' },
      sort: 'costUsd',
      descending: false,
      page: 3,
      pageSize: 20,
    });
    expect(traceViewToSearch(view)).toBe('status=error&environment=staging&sort=costUsd&page=3&pageSize=20');
    const defaults = parseTraceView('');
    expect(defaults).toEqual({ filters: {}, sort: 'startTime', descending: true, page: 1, pageSize: 50 });
    expect(traceViewToSearch(defaults)).toBe('');
    expect(parseTraceView('sort=-nonsense&page=-4&pageSize=7')).toMatchObject({
      sort: 'startTime',
      descending: true,
      page: 1,
      pageSize: 50,
    });
  });

  it('sorts a page by a column with missing values last', () => {
    const rows = [{ costUsd: 2 }, { costUsd: undefined }, { costUsd: 5 }];
    expect(sortRows(rows, 'costUsd', true).map((r) => r.costUsd)).toEqual([5, 2, undefined]);
    expect(sortRows(rows, 'costUsd', false).map((r) => r.costUsd)).toEqual([2, 5, undefined]);
  });
});

describe('prompt versions', () => {
  it('orders numerically, bumps, and finds template variables', () => {
    expect(compareVersions('1.10.0', '1.9.3')).toBeGreaterThan(0);
    expect(sortVersionsDesc([{ version: '1.2.0' }, { version: '1.10.0' }, { version: '0.9.9' }]).map((v) => v.version)).toEqual([
      '1.10.0',
      '1.2.0',
      '0.9.9',
    ]);
    expect(bumpVersion('1.2.3', 'patch')).toBe('1.2.4');
    expect(bumpVersion('1.2.3', 'minor')).toBe('1.3.0');
    expect(bumpVersion('1.2.3', 'major')).toBe('2.0.0');
    expect(templateVariables('Hi {name}, {{literal}} and {name} or { not } {user_id}')).toEqual(['name', 'user_id']);
    expect(templateVariables(null)).toEqual([]);
  });

  it('prints money with the digits a cheap call needs', () => {
    expect(formatUsd(0.0021)).toBe('$0.0021');
    expect(formatUsd(0.000123)).toBe('$0.000123');
    expect(formatUsd(12.5)).toBe('$12.5');
    expect(formatUsd(1234.5)).toBe('$1,234.50');
    expect(formatUsd(0)).toBe('$0');
  });
});
