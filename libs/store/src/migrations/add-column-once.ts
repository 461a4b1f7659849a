/** MySQL ER_DUP_FIELDNAME; SQLite says "duplicate column name". */
export function isDuplicateColumn(err: unknown): boolean {
  return (err as { errno?: number }).errno === 1060 || /duplicate column name/i.test(String((err as { message?: unknown }).message ?? ''));
}

/**
 * Runs an `ALTER TABLE … ADD COLUMN` that may have run before: MySQL DDL is not transactional, so
 * a migration interrupted half-way is run again from its first step (the migrations 0008–0010).
 */
export async function addColumnOnce(run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
  } catch (err) {
    if (!isDuplicateColumn(err)) throw err;
  }
}
