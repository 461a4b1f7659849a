/**
 * One shared instance of each recently seen text (issue 9: memory per run in flight).
 *
 * Every model call builds its system prompt again, and a run waiting on its model keeps the
 * prompts of its pending call and of its previous call (the recorder's base for the next delta):
 * ~3 KB each for the default prompt, identical from run to run within a second (the prompt's
 * clock has whole seconds). Strings are immutable, so handing out the first equal instance changes
 * nothing but the memory. Bounded: the oldest text goes when `capacity` is reached.
 */
export class TextInterner {
  private readonly texts = new Map<string, string>();

  constructor(private readonly capacity: number) {}

  intern(text: string): string {
    const known = this.texts.get(text);
    if (known !== undefined) return known;
    if (this.texts.size >= this.capacity) this.texts.delete(this.texts.keys().next().value!);
    this.texts.set(text, text);
    return text;
  }

  get size(): number {
    return this.texts.size;
  }
}
