/**
 * The labels of a version to show beside its "latest" badge: the API lists "latest" among the
 * labels of the latest version (its isLatest flag), which the badge already says.
 */
export function labelsBesideLatest(labels: readonly string[]): string[] {
  return labels.filter((label) => label !== 'latest');
}
