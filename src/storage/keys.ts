// Every key the node stores, in one place. A key is a one-byte prefix followed by its subject.
//
//   m<name>          metadata: format version, chain identity, head block hash
//   h<hash>          block header (RLP)
//   b<hash>          block body: transactions and uncle headers (RLP)
//   n<number:8>      canonical index: block number -> hash
//   d<hash>          total difficulty up to the block
//   r<hash>          the block's receipts, logs included (RLP)
//   t<hash>          transaction index: transaction hash -> block hash and position (canonical blocks)
//   a<number:8>      blocks at a height that are or were off the canonical chain (RLP list of hashes)
//   s<node hash>     state-trie and storage-trie nodes, and contract code (prefixed by the trie)
//   p<arrival:8>     a transaction the pool holds (signed RLP), by order of arrival (txpool/poolJournal.ts)

const textEncoder = new TextEncoder();

function prefixed(prefix: string, subject: Uint8Array): Uint8Array {
  const key = new Uint8Array(1 + subject.length);
  key[0] = prefix.charCodeAt(0);
  key.set(subject, 1);
  return key;
}

/** A prefix followed by a number as 8 big-endian bytes (keys in number order). */
function prefixedNumber(prefix: string, value: bigint): Uint8Array {
  const subject = new Uint8Array(8);
  new DataView(subject.buffer).setBigUint64(0, value);
  return prefixed(prefix, subject);
}

export const storeKeys = {
  metadata: (name: string) => prefixed("m", textEncoder.encode(name)),
  header: (blockHash: Uint8Array) => prefixed("h", blockHash),
  body: (blockHash: Uint8Array) => prefixed("b", blockHash),
  canonicalHash: (blockNumber: bigint) => prefixedNumber("n", blockNumber),
  totalDifficulty: (blockHash: Uint8Array) => prefixed("d", blockHash),
  receipts: (blockHash: Uint8Array) => prefixed("r", blockHash),
  transactionLocation: (transactionHash: Uint8Array) => prefixed("t", transactionHash),
  sideBlocksAt: (blockNumber: bigint) => prefixedNumber("a", blockNumber),
  trieNode: (nodeKey: Uint8Array) => prefixed("s", nodeKey),
  pooledTransaction: (arrival: bigint) => prefixedNumber("p", arrival),
  /** The prefix every pooledTransaction key starts with. */
  pooledTransactions: prefixed("p", new Uint8Array(0)),
};

/** Names of the metadata entries. */
export const metadataNames = {
  formatVersion: "formatVersion",
  chainIdentity: "chainIdentity",
  head: "head",
  /** The peer-to-peer node key (32 bytes): a stable peer id across restarts. */
  p2pNodeKey: "p2pNodeKey",
} as const;
