// Memoizes a pure function of a string in a bounded LRU: hot paths see a handful of distinct keys again and again.

/** `fn` with its last `maxEntries` distinct results remembered (a Map keeps insertion order: a hit moves to the end). */
export function boundedMemo<T>(fn: (key: string) => T, maxEntries: number): (key: string) => T {
  const entries = new Map<string, T>();
  return (key) => {
    if (entries.has(key)) {
      const value = entries.get(key)!;
      entries.delete(key);
      entries.set(key, value);
      return value;
    }
    const value = fn(key);
    entries.set(key, value);
    if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    return value;
  };
}
