/**
 * Seeded randomness for tests: a failure names its seed, and the same seed gives the same run.
 * Not for anything secret.
 */

/** A linear congruential generator (Numerical Recipes' constants): a float in [0, 1) per call. */
export function rng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** A new array with the items in a uniformly random order (Fisher–Yates), drawn from `random`. */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** A seed for one run: TEST_SEED from the environment when set (to reproduce a failure), else a random one. */
export function testSeed(): number {
  const fromEnv = process.env.TEST_SEED;
  if (fromEnv !== undefined && /^\d+$/.test(fromEnv)) return Number(fromEnv) >>> 0;
  return Math.floor(Math.random() * 2 ** 32);
}

/**
 * Runs `body`, naming `seed` in any failure it throws (an assertion included), so a run drawn from a
 * random seed can be replayed with TEST_SEED=<seed>.
 */
export async function withSeed<T>(seed: number, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof Error)
      error.message = `${error.message}\n(seed ${seed}: TEST_SEED=${seed} replays this order)`;
    throw error;
  }
}
