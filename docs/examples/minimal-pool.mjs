// A minimal merged-mining pool for chain-node, on Node.js built-ins only: it asks the node for work
// (mnr_getWork), makes a parent-chain block whose only transaction is a coinbase committing to the
// work in an OP_RETURN output, searches the header's nonce until its hash meets the target, and
// submits header, coinbase and merkle branch (mnr_submitParentBlockPartialMerkle). A real pool does
// the same with its stratum miners and its parent-chain node's block template.
//
//   node docs/examples/minimal-pool.mjs [node URL, default http://127.0.0.1:4444] [blocks, default 1]
import { createHash } from "node:crypto";

const url = process.argv[2] ?? "http://127.0.0.1:4444";
const blocks = Number(process.argv[3] ?? 1);

const sha256d = (bytes) => createHash("sha256").update(createHash("sha256").update(bytes).digest()).digest();

async function rpc(method, params) {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  const answer = await response.json();
  if (answer.error) throw new Error(`${method}: ${answer.error.code} ${answer.error.message}`);
  return answer.result;
}

/** A coinbase (serialized without witness): one input with the null outpoint, a payout, then OP_RETURN "RSKBLOCK:" + the hash. */
function coinbaseFor(blockHashForMergedMining, extraNonce) {
  const commitment = Buffer.concat([Buffer.from("RSKBLOCK:", "ascii"), Buffer.from(blockHashForMergedMining.slice(2), "hex")]);
  const inputScript = Buffer.concat([Buffer.from([0x04]), extraNonce]);
  const payoutScript = Buffer.from("76a914" + "00".repeat(20) + "88ac", "hex");
  const commitmentScript = Buffer.concat([Buffer.from([0x6a, commitment.length]), commitment]);
  const u32 = (value) => Buffer.from(new Uint32Array([value]).buffer);
  const u64 = (value) => Buffer.from(new BigUint64Array([value]).buffer);
  return Buffer.concat([
    u32(1), // version
    Buffer.from([1]), Buffer.alloc(32), u32(0xffffffff), Buffer.from([inputScript.length]), inputScript, u32(0xffffffff), // the input
    Buffer.from([2]),
    u64(625_000_000n), Buffer.from([payoutScript.length]), payoutScript,
    u64(0n), Buffer.from([commitmentScript.length]), commitmentScript,
    u32(0), // lock time
  ]);
}

for (let mined = 0; mined < blocks; mined++) {
  const work = await rpc("mnr_getWork", []);
  const target = BigInt(work.target);
  const coinbase = coinbaseFor(work.blockHashForMergedMining, Buffer.from(new Uint32Array([mined]).buffer));
  const txid = sha256d(coinbase);
  // A one-transaction block: the merkle root is the coinbase's txid, and its branch is empty.
  const header = Buffer.alloc(80);
  header.writeUInt32LE(0x20000000, 0);
  txid.copy(header, 36);
  header.writeUInt32LE(Math.floor(Date.now() / 1000), 68);
  header.writeUInt32LE(0x207fffff, 72);
  let tries = 0;
  for (let nonce = 0; ; nonce++) {
    header.writeUInt32LE(nonce, 76);
    tries++;
    // The header's hash read as Bitcoin reads it (little-endian) against the target.
    if (BigInt(`0x${Buffer.from(sha256d(header)).reverse().toString("hex")}`) <= target) break;
  }
  const blockHash = Buffer.from(sha256d(header)).reverse().toString("hex");
  const info = await rpc("mnr_submitParentBlockPartialMerkle", [blockHash, header.toString("hex"), coinbase.toString("hex"), txid.toString("hex"), "1"]);
  const result = Buffer.from(info.blockImportedResult.slice(2), "hex").toString("ascii");
  console.log(`block ${Number(info.blockIncludedHeight)} ${info.blockHash}: ${result} after ${tries} header hashes`);
}
