// A minimal MaxMind DB (format 2.0) writer for tests: IPv4 networks mapped to records, 24-bit search tree.
// Spec: https://maxmind.github.io/MaxMind-DB/ — enough to exercise Herald's reader without shipping a real database.

type Value = string | number | boolean | Value[] | { [key: string]: Value };

function control(type: number, size: number): Buffer {
  const extended = type > 7;
  let first = (extended ? 0 : type) << 5;
  let extra: number[];
  if (size < 29) {
    first |= size;
    extra = [];
  } else if (size < 285) {
    first |= 29;
    extra = [size - 29];
  } else if (size < 65_821) {
    first |= 30;
    extra = [(size - 285) >> 8, (size - 285) & 0xff];
  } else {
    first |= 31;
    const rest = size - 65_821;
    extra = [(rest >> 16) & 0xff, (rest >> 8) & 0xff, rest & 0xff];
  }
  return Buffer.from([first, ...(extended ? [type - 7] : []), ...extra]);
}

function encode(value: Value): Buffer {
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([control(2, bytes.length), bytes]);
  }
  if (typeof value === 'boolean') return control(14, value ? 1 : 0);
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new Error(`unsupported number ${value}`);
    const bytes: number[] = [];
    for (let v = value; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
    return Buffer.concat([control(6, bytes.length), Buffer.from(bytes)]);
  }
  if (Array.isArray(value)) return Buffer.concat([control(11, value.length), ...value.map(encode)]);
  const entries = Object.entries(value);
  return Buffer.concat([control(7, entries.length), ...entries.flatMap(([k, v]) => [encode(k), encode(v)])]);
}

interface TrieNode {
  children: [TrieNode | number | undefined, TrieNode | number | undefined]; // number = data offset
}

/** Builds an IPv4 .mmdb mapping each CIDR (e.g. `81.2.69.0/24`) to its record. */
export function writeMmdb(networks: Record<string, Record<string, Value>>, databaseType = 'Herald-Test-City'): Buffer {
  const root: TrieNode = { children: [undefined, undefined] };
  const data: Buffer[] = [];
  let dataSize = 0;
  for (const [cidr, record] of Object.entries(networks)) {
    const [address, prefix] = cidr.split('/');
    const bitsCount = Number(prefix ?? 32);
    const ip = address!.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
    const offset = dataSize;
    const encoded = encode(record);
    data.push(encoded);
    dataSize += encoded.length;
    let node = root;
    for (let depth = 0; depth < bitsCount; depth++) {
      const bit = Math.floor(ip / 2 ** (31 - depth)) % 2;
      if (depth === bitsCount - 1) {
        node.children[bit] = offset;
      } else {
        let next = node.children[bit];
        if (next === undefined || typeof next === 'number') {
          next = { children: [undefined, undefined] };
          node.children[bit] = next;
        }
        node = next;
      }
    }
  }
  // Number the nodes breadth first; the root is node 0.
  const nodes: TrieNode[] = [root];
  for (let i = 0; i < nodes.length; i++) {
    for (const child of nodes[i]!.children) if (child !== undefined && typeof child !== 'number') nodes.push(child);
  }
  const nodeCount = nodes.length;
  const numbers = new Map(nodes.map((n, i) => [n, i]));
  const tree = Buffer.alloc(nodeCount * 6);
  nodes.forEach((node, i) => {
    node.children.forEach((child, side) => {
      const record =
        child === undefined ? nodeCount : typeof child === 'number' ? nodeCount + 16 + child : numbers.get(child)!;
      tree.writeUIntBE(record, i * 6 + side * 3, 3);
    });
  });
  const metadata = encode({
    node_count: nodeCount,
    record_size: 24,
    ip_version: 4,
    database_type: databaseType,
    languages: ['en'],
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    build_epoch: Math.floor(Date.now() / 1000),
    description: { en: 'Herald test database' },
  });
  return Buffer.concat([
    tree,
    Buffer.alloc(16),
    ...data,
    Buffer.from([0xab, 0xcd, 0xef]),
    Buffer.from('MaxMind.com', 'ascii'),
    metadata,
  ]);
}
