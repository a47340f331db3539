// A block from a file decoded one step ahead of the import: its transactions' signatures go to the
// recovery worker (node/recoveryOffload.ts) while the importer executes the block before it, and
// the block is finished (senders from the recovered keys) when its turn comes. The same checks and
// messages as Block.decode (chain/block.ts), which it follows; a signature the worker could not
// take is recovered on the main thread, as Block.decode does. Recovery was 8 % of an import's main
// thread (10,000 mixed blocks, --cpu-prof), and automine already recovers concurrent sends there.
import type { Common } from "@ethereumjs/common";
import { RLP } from "@ethereumjs/rlp";
import { Block, MalformedBlockError } from "../chain/block.js";
import { BlockHeader } from "../chain/header.js";
import { decodeSignedTransaction, invalidSignature, withSignerKey, type SignedTransaction } from "../chain/transactions.js";
import { recoverSignerKey, SignatureRecoveryError, type RecoveryAhead, type SenderRecovery } from "../common/signatures.js";

/** A block whose senders are being recovered; `finish` gives the Block, or throws MalformedBlockError. */
export interface BlockAhead {
  finish(): Block;
  /** Lets the recoveries go (the block will not be imported). */
  release(): void;
}

function headerFrom(items: unknown, what: string): BlockHeader {
  if (!Array.isArray(items)) throw new MalformedBlockError(`the ${what} is not an RLP list`);
  try {
    return BlockHeader.decode(RLP.encode(items as Uint8Array[]));
  } catch (error) {
    throw new MalformedBlockError(`the ${what}: ${(error as Error).message}`);
  }
}

/**
 * Starts decoding `encoded` (the wire form); throws MalformedBlockError at once for what needs no
 * recovery. Without `recovery` (one core, or the worker off) `finish` recovers every sender itself.
 */
export function decodeBlockAhead(encoded: Uint8Array, common: Common, recovery: SenderRecovery | undefined): BlockAhead {
  let items: unknown;
  try {
    items = RLP.decode(encoded);
  } catch (error) {
    throw new MalformedBlockError(`not RLP: ${(error as Error).message}`);
  }
  if (!Array.isArray(items) || items.length !== 3 || !Array.isArray(items[0]) || !Array.isArray(items[1]) || !Array.isArray(items[2])) {
    throw new MalformedBlockError("a block is an RLP list of a header, a list of transactions and a list of uncle headers");
  }
  const [headerItems, transactionItems, uncleItems] = items as [unknown[], unknown[], unknown[]];
  const header = headerFrom(headerItems, "header");
  const signed: SignedTransaction[] = [];
  const aheads: (RecoveryAhead | undefined)[] = [];
  const release = () => aheads.forEach((ahead) => ahead?.release());
  try {
    for (const [index, item] of transactionItems.entries()) {
      if (!Array.isArray(item)) throw new MalformedBlockError(`transaction ${index} is not an RLP list (typed transactions are not accepted)`);
      let transaction: SignedTransaction;
      try {
        transaction = decodeSignedTransaction(RLP.encode(item as Uint8Array[]), common);
      } catch (error) {
        throw new MalformedBlockError(`transaction ${index}: ${(error as Error).message}`);
      }
      signed.push(transaction);
      aheads.push(recovery?.recoverAhead(transaction.signature));
    }
    const uncles = uncleItems.map((item, index) => headerFrom(item, `uncle ${index}`));
    return {
      release,
      finish() {
        try {
          const transactions = signed.map((transaction, index) => {
            const ahead = aheads[index];
            aheads[index] = undefined;
            let key: Uint8Array;
            try {
              key = ahead?.key() ?? recoverSignerKey(transaction.signature);
            } catch (error) {
              if (error instanceof SignatureRecoveryError) throw new MalformedBlockError(`transaction ${index}: ${invalidSignature().message}`);
              throw error;
            }
            return withSignerKey(transaction, key);
          });
          return new Block(header, transactions, uncles);
        } catch (error) {
          release();
          throw error;
        }
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}
