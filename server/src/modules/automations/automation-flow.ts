// A flow's shape: its delay notation, and the graph rules a flow must keep to be saved (one entry, known links, no cycle).
import type { AutomationStep } from '../../db/schema.js';

/** `30m`, `2h`, `1d`, `2w`: a whole number and one unit. */
export const DURATION_PATTERN = /^([1-9]\d{0,5})([mhdw])$/;

const UNIT_SECONDS = { m: 60, h: 3600, d: 86_400, w: 604_800 } as const;
const MAX_DELAY_SECONDS = 365 * 86_400;

/** A delay's (or a wait's timeout) duration in seconds; undefined when it is not one (or longer than 365 days). */
export function durationSeconds(duration: string): number | undefined {
  const match = DURATION_PATTERN.exec(duration);
  if (!match) return undefined;
  const seconds = Number(match[1]) * UNIT_SECONDS[match[2] as keyof typeof UNIT_SECONDS];
  return seconds <= MAX_DELAY_SECONDS ? seconds : undefined;
}

/** A step's links by field: `next`, or the two branches of a condition or a wait-until step (null: the flow ends there). */
function links(step: AutomationStep): [string, string | null][] {
  if (step.type === 'condition') return [['trueBranch', step.trueBranch], ['falseBranch', step.falseBranch]];
  if (step.type === 'wait_until') return [['matchedBranch', step.matchedBranch], ['timeoutBranch', step.timeoutBranch]];
  if (step.type === 'exit') return [];
  return [['next', step.next]];
}

/** The steps a step may go to. */
export function successors(step: AutomationStep): (string | null)[] {
  return links(step).map(([, target]) => target);
}

export interface FlowProblem {
  field: string;
  error: string;
}

/**
 * What keeps `steps` from being a flow: a repeated id, a link to no step, a delay too long, a cycle, or a step the
 * entry step (the first) does not lead to, or that a step leads back to. Each problem names its step.
 */
export function flowProblems(steps: readonly AutomationStep[]): FlowProblem[] {
  const problems: FlowProblem[] = [];
  const index = new Map<string, number>();
  steps.forEach((step, i) => {
    if (index.has(step.id)) problems.push({ field: `steps[${i}].id`, error: `step ${step.id}: the id is used by another step` });
    else index.set(step.id, i);
  });
  steps.forEach((step, i) => {
    for (const [field, target] of links(step)) {
      if (target !== null && !index.has(target)) problems.push({ field: `steps[${i}].${field}`, error: `step ${step.id}: ${field} names no step (${target})` });
      if (target === steps[0]!.id) problems.push({ field: `steps[${i}].${field}`, error: `step ${step.id}: ${field} goes back to the entry step ${target}` });
    }
    if (step.type === 'delay' && durationSeconds(step.duration) === undefined) {
      problems.push({ field: `steps[${i}].duration`, error: `step ${step.id}: a delay is at most 365 days` });
    }
    if (step.type === 'wait_until' && durationSeconds(step.timeout) === undefined) {
      problems.push({ field: `steps[${i}].timeout`, error: `step ${step.id}: a wait is at most 365 days` });
    }
  });
  if (problems.length > 0) return problems;

  // Depth-first from the entry step: a step met again on the current path is a cycle; one never met is unreachable.
  const state = new Map<string, 'open' | 'done'>();
  const visit = (id: string): string | undefined => {
    state.set(id, 'open');
    for (const target of successors(steps[index.get(id)!]!)) {
      if (target === null) continue;
      if (state.get(target) === 'open') return target;
      if (!state.has(target)) {
        const cycle = visit(target);
        if (cycle) return cycle;
      }
    }
    state.set(id, 'done');
    return undefined;
  };
  const cycle = visit(steps[0]!.id);
  if (cycle) return [{ field: `steps[${index.get(cycle)}]`, error: `step ${cycle}: the flow comes back to it (a cycle)` }];
  steps.forEach((step, i) => {
    if (!state.has(step.id)) problems.push({ field: `steps[${i}]`, error: `step ${step.id}: no step leads to it from the entry step ${steps[0]!.id}` });
  });
  return problems;
}
