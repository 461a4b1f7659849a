/**
 * Case-insensitive resolution of the files a SKILL.md names. Anthropic's skills were written on
 * case-insensitive file systems: the pdf skill says "see REFERENCE.md" and ships reference.md. On
 * Linux the model would then fail to read the file, so a name that does not exist as written but
 * matches exactly one file of the skill when case is ignored is rewritten to that file.
 */

/** A relative file path with an extension, as it appears in prose, a code span or a Markdown link. */
const FILE_REF = /(?<![\w/.-])((?:[\w.-]+\/)*[\w-][\w.-]*\.[A-Za-z0-9]{1,8})(?![\w/-])/g;

/** Case-insensitive lookup of a skill's files (paths relative to its folder, `/`-separated). */
export class SkillFileIndex {
  private readonly exact: ReadonlySet<string>;
  private readonly folded = new Map<string, string[]>();

  constructor(files: readonly string[]) {
    this.exact = new Set(files);
    for (const f of files) {
      const key = f.toLowerCase();
      this.folded.set(key, [...(this.folded.get(key) ?? []), f]);
    }
  }

  /**
   * The file `ref` names: itself when it exists as written, else the one file equal to it ignoring
   * case, else undefined (missing, or ambiguous: `Forms.md` and `forms.md` both exist).
   */
  resolve(ref: string): string | undefined {
    const rel = ref.replace(/^\.\//, '');
    if (this.exact.has(rel)) return rel;
    const candidates = this.folded.get(rel.toLowerCase());
    return candidates?.length === 1 ? candidates[0] : undefined;
  }
}

/** `text` with every file reference that only matches ignoring case rewritten to the real name. */
export function resolveSkillLinks(text: string, index: SkillFileIndex): { text: string; rewritten: Array<[string, string]> } {
  const rewritten = new Map<string, string>();
  const out = text.replace(FILE_REF, (ref: string) => {
    const real = index.resolve(ref);
    if (real === undefined || real === ref.replace(/^\.\//, '')) return ref;
    rewritten.set(ref, real);
    return real;
  });
  return { text: out, rewritten: [...rewritten] };
}
