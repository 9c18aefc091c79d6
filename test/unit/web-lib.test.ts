import { describe, expect, it } from 'vitest';
import { parseTraceView, sortRows, traceViewToSearch } from '../../web/src/lib/filters.js';
import { bumpVersion, compareVersions, sortVersionsDesc, templateVariables } from '../../web/src/lib/semver.js';
import { formatUsd } from '../../web/src/lib/format.js';
import { itemOfPath, itemPath, pathSegment, segmentValue } from '../../web/src/lib/paths.js';
import { labelsBesideLatest } from '../../web/src/lib/labels.js';

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

  it('keeps the score filter (name, bounds, label) in the URL', () => {
    const view = parseTraceView('score=accuracy&scoreMin=-1&scoreMax=3&scoreValue=good');
    expect(view.filters).toEqual({ score: 'accuracy', scoreMin: '-1', scoreMax: '3', scoreValue: 'good' });
    expect(traceViewToSearch(view)).toBe('score=accuracy&scoreMin=-1&scoreMax=3&scoreValue=good');
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

describe('paths of one item built from user data', () => {
  const odd = ['..', '.', '...', 'a/b', '?x', '#y', '%2F', 'a%2Fb', '~', '~..', '~~x', '..~', 'é ü', ' ', 'conv-1', '/', '../..'];

  it('round-trips every value through a segment the URL parser leaves alone', () => {
    for (const value of odd) {
      const path = itemPath('sessions', value);
      // The browser's own resolution of the link, as clicking it does.
      const resolved = new URL(path, 'http://console.test/traces').pathname;
      expect(resolved, value).toBe(path);
      expect(itemOfPath(resolved, 'sessions'), value).toBe(value);
      expect(segmentValue(pathSegment(value)), value).toBe(value);
    }
  });

  it('leaves plain values as encodeURIComponent writes them and escapes only dot segments and a leading "~"', () => {
    expect(itemPath('prompts', 'support-agent')).toBe('/prompts/support-agent');
    expect(itemPath('users', 'a/b?c#d')).toBe('/users/a%2Fb%3Fc%23d');
    expect(pathSegment('..')).toBe('~..');
    expect(pathSegment('.')).toBe('~.');
    expect(pathSegment('~x')).toBe('~~x');
    expect(pathSegment('...')).toBe('...');
  });

  it('reads only a path of its collection with one segment', () => {
    expect(itemOfPath('/sessions/conv-1', 'sessions')).toBe('conv-1');
    expect(itemOfPath('/sessions/conv-1/', 'sessions')).toBe('conv-1');
    expect(itemOfPath('/users/conv-1', 'sessions')).toBeUndefined();
    expect(itemOfPath('/sessions/', 'sessions')).toBeUndefined();
    expect(itemOfPath('/sessions/a/b', 'sessions')).toBeUndefined();
    expect(itemOfPath('/sessions/%E0%A4%A', 'sessions')).toBe('%E0%A4%A'); // a malformed escape, as typed
  });
});

describe('version labels', () => {
  it('leaves "latest" to its badge', () => {
    expect(labelsBesideLatest(['latest', 'production', 'staging'])).toEqual(['production', 'staging']);
    expect(labelsBesideLatest(['production'])).toEqual(['production']);
  });
});
