/** Agent steps of a run (seed 000: default 100, 1–500; per run `configurable.max_loops`). */
export const MAX_LOOPS_DEFAULT = 100;
export const MAX_LOOPS_MIN = 1;
export const MAX_LOOPS_MAX = 500;
