/**
 * The bench's goals, and the summary printed at the end of `npm run bench`:
 * one line per goal with the figure this run measured and a mark where it
 * is missed. A missed goal is a finding, not a failure: the exit code stays
 * for runs that could not measure (errors, wrong answers), since a shared or
 * small machine moves every figure.
 */

/** A ratio to a baseline measured in the same run, e.g. gateway req/s ÷ bare req/s. */
export interface RatioGoal {
  readonly atLeast: number;
  /** Where the work would like to be; reported, not marked. */
  readonly stretch?: number;
}

/** One line of the summary. */
export interface GoalLine {
  readonly work: string;
  /** The baseline the figure is set against. */
  readonly against: string;
  readonly figure: string;
  readonly goal: string;
  /** Undefined: not measured this run (say, the figure is n/a). */
  readonly met: boolean | undefined;
}

const MISSED = "MISSED";

export function describeRatioGoal(goal: RatioGoal): string {
  const stretch = goal.stretch === undefined ? "" : ` (stretch ${goal.stretch.toFixed(2)})`;
  return `≥ ${goal.atLeast.toFixed(2)}${stretch}`;
}

export function ratioMet(ratio: number | undefined, goal: RatioGoal): boolean | undefined {
  return ratio === undefined || !Number.isFinite(ratio) ? undefined : ratio >= goal.atLeast;
}

/** "goal ≥ 0.30: met", "goal ≥ 0.30: MISSED", for a line next to the figure. */
export function goalNote(goal: string, met: boolean | undefined): string {
  return `goal ${goal}: ${mark(met)}`;
}

export function ratioLine(work: string, against: string, ratio: number | undefined, goal: RatioGoal): GoalLine {
  return {
    work,
    against,
    figure: ratio === undefined || !Number.isFinite(ratio) ? "n/a" : ratio.toFixed(2),
    goal: describeRatioGoal(goal),
    met: ratioMet(ratio, goal),
  };
}

export function printGoals(lines: readonly GoalLine[]): void {
  if (lines.length === 0) return;
  const header = ["work", "against", "this run", "goal", ""];
  const rows = lines.map((line) => [line.work, line.against, line.figure, line.goal, mark(line.met)]);
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]?.length ?? 0)));
  const missed = lines.filter((line) => line.met === false).length;
  console.log("");
  console.log(`goals: ${missed === 0 ? "all met" : `${missed} of ${lines.length} ${MISSED}`}`);
  for (const row of [header, ...rows]) {
    console.log(
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    );
  }
}

function mark(met: boolean | undefined): string {
  if (met === undefined) return "n/a";
  return met ? "met" : MISSED;
}
