/** Prompt versions are strict major.minor.patch; ordered numerically, bumped as the API expects. Pure. */

export type Bump = 'patch' | 'minor' | 'major';

export function parseVersion(version: string): [number, number, number] | null {
  const m = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/.exec(version);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

export function compareVersions(a: string, b: string): number {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (!pa || !pb) return a.localeCompare(b);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i]! - pb[i]!;
  return 0;
}

/** Newest first. */
export function sortVersionsDesc<T extends { version: string }>(items: readonly T[]): T[] {
  return [...items].sort((x, y) => compareVersions(y.version, x.version));
}

export function bumpVersion(version: string, bump: Bump): string {
  const p = parseVersion(version) ?? [0, 0, 0];
  if (bump === 'major') return `${p[0] + 1}.0.0`;
  if (bump === 'minor') return `${p[0]}.${p[1] + 1}.0`;
  return `${p[0]}.${p[1]}.${p[2] + 1}`;
}

/** The `{name}` placeholders of a template (`{{` and `}}` are literal braces), in first-use order. */
export function templateVariables(template: string | null | undefined): string[] {
  if (!template) return [];
  const names: string[] = [];
  const re = /\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
  for (let m = re.exec(template); m; m = re.exec(template)) if (m[1] && !names.includes(m[1])) names.push(m[1]);
  return names;
}
