/** "YYYY-MM-DD HH:MM:SS UTC" (seed 000 §4.2.2). */
export function formatUtc(d: Date): string {
  return `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** Shown form of a workspace-relative directory: "." or "outputs/". */
export function shownDir(relative: string): string {
  return relative === '.' ? '.' : `${relative}/`;
}

/** Prefix that turns an entry name into a workspace-relative path. */
export function childPrefix(relative: string): string {
  return relative === '.' ? '' : `${relative}/`;
}
