/**
 * The score names a monitor's form offers: the workspace's score configs (not archived) and
 * the names scores were given under recently (GET /api/scores/analytics), once each, in
 * alphabetical order, with the monitor's own name kept even when neither knows it (a score
 * not sent yet, or no longer). The field stays free text: a name not offered is accepted.
 */
export function scoreNameChoices(
  configs: ReadonlyArray<{ name: string; archived: boolean }> | undefined,
  seen: ReadonlyArray<{ name: string }> | undefined,
  current?: string,
): string[] {
  const names = new Set<string>();
  for (const config of configs ?? []) if (!config.archived) names.add(config.name);
  for (const score of seen ?? []) names.add(score.name);
  if (current) names.add(current);
  return [...names].sort((a, b) => a.localeCompare(b));
}

/** How far back the form looks for score names given (the analytics' window). */
export const scoreNamesLookbackMs = 30 * 24 * 3600_000;
