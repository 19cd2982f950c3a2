// One provider in front of several: a batch split by the kind of account each item goes through, one call per kind.
import type { ChannelProvider, SendOutcome } from '../channel.js';

/** Sends each item through its account kind's provider, the outcomes put back in the batch's order. */
export function byAccount<Item, Kind extends string>(name: string, providers: Record<Kind, ChannelProvider<Item>>, kindOf: (item: Item) => Kind): ChannelProvider<Item> {
  return {
    name,
    async send(items) {
      const outcomes: SendOutcome[] = new Array(items.length);
      const groups = new Map<Kind, number[]>();
      items.forEach((item, i) => {
        const kind = kindOf(item);
        if (groups.has(kind)) groups.get(kind)!.push(i);
        else groups.set(kind, [i]);
      });
      await Promise.all(
        [...groups].map(async ([kind, indexes]) => {
          const sent = await providers[kind].send(indexes.map((i) => items[i]!));
          indexes.forEach((index, j) => (outcomes[index] = sent[j]!));
        }),
      );
      return outcomes;
    },
    close: async () => {
      await Promise.all(Object.values<ChannelProvider<Item>>(providers).map((provider) => provider.close()));
    },
  };
}
