// A flow's shape: delay notations and their bounds, and the graph rules at their edges — ends on null branches,
// diamonds that meet again, long chains, cycles and unreachable steps.
import { describe, expect, it } from 'vitest';
import type { AutomationStep } from '../../db/schema.js';
import { durationSeconds, flowProblems, successors } from './automation-flow.js';

const push = (id: string, next: string | null): AutomationStep => ({ id, type: 'send_push', content: { title: id, body: id }, next });
const delay = (id: string, duration: string, next: string | null): AutomationStep => ({ id, type: 'delay', duration, next });
const condition = (id: string, trueBranch: string | null, falseBranch: string | null): AutomationStep => ({
  id,
  type: 'condition',
  criteria: { attributes: [{ path: 'plan', operator: 'eq', value: 'pro' }] },
  trueBranch,
  falseBranch,
});
const exit = (id: string): AutomationStep => ({ id, type: 'exit' });
const waitUntil = (id: string, matchedBranch: string | null, timeoutBranch: string | null, timeout = '1d'): AutomationStep => ({
  id,
  type: 'wait_until',
  event: 'order.completed',
  timeout,
  matchedBranch,
  timeoutBranch,
});

describe('durationSeconds', () => {
  it('reads minutes, hours, days and weeks', () => {
    expect(durationSeconds('30m')).toBe(1800);
    expect(durationSeconds('1m')).toBe(60);
    expect(durationSeconds('2h')).toBe(7200);
    expect(durationSeconds('1d')).toBe(86_400);
    expect(durationSeconds('2w')).toBe(1_209_600);
  });

  it('takes up to 365 days in any unit, and nothing longer', () => {
    expect(durationSeconds('365d')).toBe(31_536_000);
    expect(durationSeconds('8760h')).toBe(31_536_000);
    expect(durationSeconds('525600m')).toBe(31_536_000);
    expect(durationSeconds('52w')).toBe(31_449_600);
    for (const tooLong of ['366d', '8761h', '525601m', '53w', '999999w']) expect(durationSeconds(tooLong), tooLong).toBeUndefined();
  });

  it('refuses anything but a whole positive number and one lower-case unit', () => {
    for (const bad of ['0m', '0d', '01d', '-1d', '1.5h', '1', 'd', '1y', '1s', '1D', ' 1d', '1d ', '1d2h', '1 d', '', '1000000m']) {
      expect(durationSeconds(bad), JSON.stringify(bad)).toBeUndefined();
    }
  });
});

describe('successors', () => {
  it('is next, both branches of a condition (null ends), nothing after an exit', () => {
    expect(successors(push('a', 'b'))).toEqual(['b']);
    expect(successors(push('a', null))).toEqual([null]);
    expect(successors(condition('c', null, 'x'))).toEqual([null, 'x']);
    expect(successors(exit('x'))).toEqual([]);
    expect(successors(waitUntil('w', 'yes', null))).toEqual(['yes', null]);
  });
});

describe('flowProblems', () => {
  it('accepts a single step, branches that end the flow, and an exit', () => {
    expect(flowProblems([push('a', null)])).toEqual([]);
    expect(flowProblems([condition('c', null, null)])).toEqual([]);
    expect(flowProblems([condition('c', 'yes', null), push('yes', 'out'), exit('out')])).toEqual([]);
    expect(flowProblems([condition('c', null, 'no'), push('no', null)])).toEqual([]);
  });

  it("checks a wait-until step's branches and timeout like a condition's and a delay's", () => {
    expect(flowProblems([waitUntil('w', 'yes', 'no'), push('yes', 'join'), push('no', 'join'), exit('join')])).toEqual([]);
    expect(flowProblems([waitUntil('w', 'gone', null)])).toEqual([{ field: 'steps[0].matchedBranch', error: 'step w: matchedBranch names no step (gone)' }]);
    expect(flowProblems([waitUntil('w', null, null, '366d')])).toEqual([{ field: 'steps[0].timeout', error: 'step w: a wait is at most 365 days' }]);
    expect(flowProblems([push('a', 'w'), waitUntil('w', null, 'b'), push('b', 'w')])).toEqual([{ field: 'steps[1]', error: 'step w: the flow comes back to it (a cycle)' }]);
  });

  it('accepts a diamond: two branches that meet again are no cycle', () => {
    expect(flowProblems([condition('c', 'left', 'right'), push('left', 'join'), delay('right', '1d', 'join'), push('join', null)])).toEqual([]);
    // Both branches to the same step, and nested diamonds meeting at the end.
    expect(flowProblems([condition('c', 'same', 'same'), push('same', null)])).toEqual([]);
    expect(
      flowProblems([
        condition('c1', 'c2', 'c3'),
        condition('c2', 'a', 'b'),
        condition('c3', 'b', 'end'),
        push('a', 'end'),
        push('b', 'end'),
        push('end', null),
      ]),
    ).toEqual([]);
  });

  it('accepts a long chain, steps listed in any order after the entry', () => {
    const chain = Array.from({ length: 100 }, (_, i) => push(`s${i}`, i < 99 ? `s${i + 1}` : null));
    expect(flowProblems(chain)).toEqual([]);
    expect(flowProblems([chain[0]!, ...chain.slice(1).reverse()])).toEqual([]);
    // Far longer than a saved flow may be: the walk does not run out of stack.
    const long = Array.from({ length: 5000 }, (_, i) => delay(`d${i}`, '1m', i < 4999 ? `d${i + 1}` : null));
    expect(flowProblems(long)).toEqual([]);
  });

  it('finds a cycle through a branch, naming the step it comes back to', () => {
    expect(flowProblems([push('a', 'c'), condition('c', 'b', null), push('b', 'c')])).toEqual([{ field: 'steps[1]', error: 'step c: the flow comes back to it (a cycle)' }]);
    // At the end of a long chain.
    const chain = Array.from({ length: 60 }, (_, i) => push(`s${i}`, i < 59 ? `s${i + 1}` : 's30'));
    expect(flowProblems(chain)).toEqual([{ field: 'steps[30]', error: 'step s30: the flow comes back to it (a cycle)' }]);
  });

  it('names a branch back to the entry, a link to no step, and a repeated id', () => {
    expect(flowProblems([condition('c', 'c', null)])).toEqual([{ field: 'steps[0].trueBranch', error: 'step c: trueBranch goes back to the entry step c' }]);
    expect(flowProblems([condition('c', null, 'gone')])).toEqual([{ field: 'steps[0].falseBranch', error: 'step c: falseBranch names no step (gone)' }]);
    expect(flowProblems([push('a', 'b'), push('b', null), push('b', null)])).toEqual([{ field: 'steps[2].id', error: 'step b: the id is used by another step' }]);
  });

  it('names every step the entry does not lead to, a cycle among them included', () => {
    expect(flowProblems([push('a', null), push('b', 'c'), push('c', 'b')])).toEqual([
      { field: 'steps[1]', error: 'step b: no step leads to it from the entry step a' },
      { field: 'steps[2]', error: 'step c: no step leads to it from the entry step a' },
    ]);
    // An exit ends the flow: what is listed after it is unreachable.
    expect(flowProblems([exit('out'), push('after', null)])).toEqual([{ field: 'steps[1]', error: 'step after: no step leads to it from the entry step out' }]);
  });

  it('names a delay longer than 365 days', () => {
    expect(flowProblems([delay('w', '53w', null)])).toEqual([{ field: 'steps[0].duration', error: 'step w: a delay is at most 365 days' }]);
  });
});
