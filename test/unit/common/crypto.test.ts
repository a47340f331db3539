// The node's hashing (WebAssembly) and signing (native) against independent JavaScript implementations.
import { expect } from "chai";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { SigningKey, Wallet, keccak256 as ethersKeccak256, toUtf8Bytes } from "ethers";
import { fastKeccakReady, keccak256 } from "../../../src/common/crypto.js";
import { recoverPublicKey, signRecoverable } from "../../../src/common/signatures.js";
import { randomBytes, seededRandom } from "../../helpers/seededRandom.js";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

describe("common/crypto", () => {
  // The WebAssembly hasher, not the JavaScript one used while it compiles.
  before(() => fastKeccakReady);

  it("hashes like @noble/hashes keccak_256 at every length around the sponge's rate, one hash after another", () => {
    const next = seededRandom(3);
    // 136 bytes is keccak-256's rate: lengths around its multiples change the padding.
    const lengths = [0, 1, 31, 32, 33, 135, 136, 137, 271, 272, 273, 1000, 4096];
    const inputs = lengths.map((length) => randomBytes(next, length));
    for (const input of inputs) expect(hex(keccak256(input)), `${input.length} bytes`).to.equal(hex(keccak_256(input)));
    // Digests handed out earlier are not changed by later hashes.
    const digests = inputs.map((input) => keccak256(input));
    inputs.forEach((input, index) => expect(hex(digests[index]!)).to.equal(hex(keccak_256(input))));
  });

  it("signs so that ethers recovers the signer, and recovers the public key ethers computes", () => {
    const wallet = new Wallet(ethersKeccak256(toUtf8Bytes("cow")));
    const privateKey = Buffer.from(wallet.privateKey.slice(2), "hex");
    for (let index = 0; index < 5; index++) {
      const messageHash = keccak_256(toUtf8Bytes(`message ${index}`));
      const recovered = signRecoverable(messageHash, privateKey);
      const [recovery, r, s] = [recovered[0]!, recovered.subarray(1, 33), recovered.subarray(33, 65)];
      const signature = { r: `0x${hex(r)}`, s: `0x${hex(s)}`, v: 27 + recovery };
      expect(SigningKey.recoverPublicKey(messageHash, signature)).to.equal(wallet.signingKey.publicKey);
      const publicKey = recoverPublicKey(messageHash, BigInt(27 + recovery), r, s);
      expect(`0x04${hex(publicKey)}`).to.equal(wallet.signingKey.publicKey);
      const eip155 = recoverPublicKey(messageHash, BigInt(35 + 2 * 33 + recovery), r, s, 33n);
      expect(hex(eip155)).to.equal(hex(publicKey));
    }
  });
});
