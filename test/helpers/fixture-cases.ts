/**
 * A fixture's cases, refused when there are none: a loop (or `it.each`) over an empty list asserts
 * nothing and passes, so a fixture regenerated wrong, or a key renamed, would pass unseen. Each
 * loop over reference values takes its cases through here.
 * Runs on: Node (tests).
 */
export function casesOf<T>(cases: readonly T[] | undefined, what: string): readonly T[] {
  if (!Array.isArray(cases) || cases.length === 0) {
    throw new Error(`the fixture has no ${what} cases: a loop over none would assert nothing (regenerate the fixture with its script)`);
  }
  return cases;
}
