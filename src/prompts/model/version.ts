import semver from 'semver';

/** Largest component the database's integer semver key can hold. */
export const MAX_VERSION_COMPONENT = 2_147_483_647;

export interface Version {
  major: number;
  minor: number;
  patch: number;
  text: string;
}

export type Bump = 'major' | 'minor' | 'patch';

export type VersionCheck = { ok: true; version: Version } | { ok: false; reason: string };

/**
 * Accepts only strict `major.minor.patch`. The `semver` package alone is lenient here: it
 * strips a leading `v` or `=` and surrounding spaces, so its answer must equal the input.
 * Prereleases and build metadata are refused: versions of a prompt form one line ordered by
 * three integers, and a prerelease would rank below a release the database orders after it.
 */
export function parseVersion(input: string): VersionCheck {
  const parsed = semver.parse(input);
  if (parsed !== null && parsed.prerelease.length > 0) {
    return { ok: false, reason: 'prerelease versions are not accepted; use major.minor.patch, for example 1.2.0' };
  }
  if (parsed !== null && parsed.build.length > 0) {
    return { ok: false, reason: 'build metadata is not accepted; use major.minor.patch, for example 1.2.0' };
  }
  if (parsed === null || parsed.version !== input) {
    return { ok: false, reason: 'must be a semantic version major.minor.patch, for example 1.2.0 (no "v" prefix, no leading zeros)' };
  }
  if ([parsed.major, parsed.minor, parsed.patch].some((n) => n > MAX_VERSION_COMPONENT)) {
    return { ok: false, reason: `each version component must be at most ${MAX_VERSION_COMPONENT}` };
  }
  return { ok: true, version: { major: parsed.major, minor: parsed.minor, patch: parsed.patch, text: input } };
}

/** Parses a version the database already holds (always valid). */
export function versionOf(text: string): Version {
  const check = parseVersion(text);
  if (!check.ok) throw new Error(`stored version ${text} is not valid`);
  return check.version;
}

export function isGreater(a: Version, b: Version): boolean {
  return semver.gt(a.text, b.text);
}

/** The next version after `from`: patch by default, minor or major resetting the lower parts. */
export function bumpVersion(from: Version, bump: Bump = 'patch'): VersionCheck {
  const next = semver.inc(from.text, bump);
  if (next === null) return { ok: false, reason: `cannot increment ${from.text}` };
  return parseVersion(next);
}
