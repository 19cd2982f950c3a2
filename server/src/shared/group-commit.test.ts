// Group commit: what is submitted together is written by one call, each item answered with its own result.
import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.js';

/** A writer that records each group it is given and answers each item doubled; an item of 13 fails its group. */
function doubling(options = { maxBatch: 100 }) {
  const groups: number[][] = [];
  const commits = new GroupCommit<number, number>(async (items) => {
    groups.push(items);
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (items.includes(13)) throw new Error('13 is refused');
    return items.map((item) => item * 2);
  }, options);
  return { groups, commits };
}

describe('GroupCommit', () => {
  it('writes the items submitted together in one call and answers each with its own result', async () => {
    const { groups, commits } = doubling();
    expect(await Promise.all([1, 2, 3].map((item) => commits.submit(item)))).toEqual([2, 4, 6]);
    expect(groups).toEqual([[1, 2, 3]]);
  });

  it('writes one group at a time: what arrives meanwhile is the next group', async () => {
    const { groups, commits } = doubling();
    const first = commits.submit(1);
    await new Promise((resolve) => setImmediate(resolve));
    const later = [2, 3].map((item) => commits.submit(item));
    expect(await Promise.all([first, ...later])).toEqual([2, 4, 6]);
    expect(groups).toEqual([[1], [2, 3]]);
  });

  it('splits at maxBatch', async () => {
    const { groups, commits } = doubling({ maxBatch: 2 });
    await Promise.all([1, 2, 3, 4, 5].map((item) => commits.submit(item)));
    expect(groups).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('writes a failed group again one item at a time: only the bad item fails', async () => {
    const { groups, commits } = doubling();
    const results = await Promise.allSettled([12, 13, 14].map((item) => commits.submit(item)));
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([24, '13 is refused', 28]);
    expect(groups).toEqual([[12, 13, 14], [12], [13], [14]]);
  });
});
