/**
 * What a person sees for a tool call. The server may name tools for people (seed 003's
 * `display_name`); when it does not, `write_file` reads as "Write File".
 */
export function readableToolName(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[_\-.\s]+/)
    .filter(Boolean);
  if (words.length === 0) return name;
  return words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(' ');
}

/** The `display_name` a payload carries (`display_name` or `displayName`), else the readable form of `name`. */
export function displayNameOf(name: string, payload?: unknown): string {
  if (payload && typeof payload === 'object') {
    const p = payload as Record<string, unknown>;
    const given = p.display_name ?? p.displayName;
    if (typeof given === 'string' && given.trim()) return given.trim();
  }
  return readableToolName(name);
}
