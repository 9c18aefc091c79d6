import { describe, expect, it } from 'vitest';
import { bumpVersion, isGreater, MAX_VERSION_COMPONENT, parseVersion, versionOf } from '../../src/prompts/model/version.js';

describe('parseVersion', () => {
  it.each(['0.0.0', '1.0.0', '1.2.3', '10.20.30', `${MAX_VERSION_COMPONENT}.0.0`])('accepts %s', (v) => {
    const check = parseVersion(v);
    expect(check.ok).toBe(true);
  });

  it('splits the components as integers', () => {
    expect(parseVersion('1.10.3')).toEqual({ ok: true, version: { major: 1, minor: 10, patch: 3, text: '1.10.3' } });
  });

  it.each([
    ['1.0', 'major.minor.patch'],
    ['1', 'major.minor.patch'],
    ['v1.0.0', 'no "v" prefix'],
    ['=1.0.0', 'major.minor.patch'],
    [' 1.0.0', 'major.minor.patch'],
    ['1.0.0 ', 'major.minor.patch'],
    ['01.0.0', 'leading zeros'],
    ['1.00.0', 'leading zeros'],
    ['1.0.0.0', 'major.minor.patch'],
    ['1.-1.0', 'major.minor.patch'],
    ['a.b.c', 'major.minor.patch'],
    ['', 'major.minor.patch'],
    ['1.0.0-rc.1', 'prerelease'],
    ['1.0.0-alpha', 'prerelease'],
    ['1.0.0+build.5', 'build metadata'],
    [`${MAX_VERSION_COMPONENT + 1}.0.0`, 'at most'],
    ['99999999999999999999.0.0', 'major.minor.patch'],
  ])('refuses %j', (v, reason) => {
    const check = parseVersion(v);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.reason).toContain(reason);
  });
});

describe('ordering and increments', () => {
  it('orders by semver, not text', () => {
    expect(isGreater(versionOf('1.10.0'), versionOf('1.9.0'))).toBe(true);
    expect(isGreater(versionOf('2.0.0'), versionOf('1.99.99'))).toBe(true);
    expect(isGreater(versionOf('1.0.10'), versionOf('1.0.9'))).toBe(true);
    expect(isGreater(versionOf('1.0.0'), versionOf('1.0.0'))).toBe(false);
    expect(isGreater(versionOf('0.9.9'), versionOf('1.0.0'))).toBe(false);
  });

  it('bumps patch by default, minor and major reset the lower parts', () => {
    const from = versionOf('1.4.7');
    expect(bumpVersion(from)).toMatchObject({ ok: true, version: { text: '1.4.8' } });
    expect(bumpVersion(from, 'minor')).toMatchObject({ ok: true, version: { text: '1.5.0' } });
    expect(bumpVersion(from, 'major')).toMatchObject({ ok: true, version: { text: '2.0.0' } });
  });

  it('refuses to bump past the largest storable component', () => {
    expect(bumpVersion(versionOf(`1.0.${MAX_VERSION_COMPONENT}`)).ok).toBe(false);
  });
});
