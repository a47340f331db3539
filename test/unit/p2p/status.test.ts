// The status message: its encoding, the refusal of every malformed form, and what a mismatch is.
import { expect } from "chai";
import { encodeRlp } from "../../../src/common/rlp.js";
import { decodeStatus, decodeStatusResponse, encodeStatus, encodeStatusResponse, statusMaxBytes, statusMismatch, StatusDecodingError, statusProtocolVersion } from "../../../src/p2p/status.js";
import { hash32, regtestLikeStatus } from "../../helpers/p2p.js";

describe("p2p status message", () => {
  const status = regtestLikeStatus({ bestNumber: 1234n, bestHash: hash32(7), bestParentHash: hash32(6), totalDifficulty: 2n ** 200n });

  it("round-trips, and as a response frame behind the result byte 0", () => {
    expect(decodeStatus(encodeStatus(status))).to.deep.equal({ ...status, protocolVersion: statusProtocolVersion });
    const frame = encodeStatusResponse(status);
    expect(frame[0]).to.equal(0);
    expect(decodeStatusResponse(frame)).to.deep.equal({ ...status, protocolVersion: statusProtocolVersion });
    expect(encodeStatus(status).length).to.be.below(statusMaxBytes);
  });

  it("refuses every malformed form with a StatusDecodingError", () => {
    const good = [1, 7771, 33, hash32(1), 5, hash32(2), hash32(3), 9] as const;
    const withItem = (index: number, value: Uint8Array | number) => encodeRlp(good.map((item, at) => (at === index ? value : item)));
    const cases: [string, Uint8Array][] = [
      ["empty", new Uint8Array(0)],
      ["not RLP", Uint8Array.from([0xf9, 0xff])],
      ["trailing bytes", Uint8Array.from([...encodeStatus(status), 0x00])],
      ["a byte string, not a list", encodeRlp(hash32(1))],
      ["7 items", encodeRlp(good.slice(0, 7))],
      ["9 items", encodeRlp([...good, 1])],
      ["a list inside", encodeRlp([1, 7771, [33], hash32(1), 5, hash32(2), hash32(3), 9])],
      ["a genesis hash of 33 bytes", withItem(3, new Uint8Array(33).fill(1))],
      ["a best hash of 31 bytes", withItem(5, new Uint8Array(31).fill(1))],
      ["a leading zero in the best number", withItem(4, Uint8Array.from([0, 5]))],
      ["a best number of 9 bytes", withItem(4, new Uint8Array(9).fill(1))],
      ["a total difficulty of 33 bytes", withItem(7, new Uint8Array(33).fill(1))],
      ["more than the size limit", new Uint8Array(statusMaxBytes + 1).fill(0x80)],
    ];
    for (const [what, bytes] of cases) expect(() => decodeStatus(bytes), what).to.throw(StatusDecodingError);
    expect(() => decodeStatusResponse(new Uint8Array(0))).to.throw(StatusDecodingError);
    expect(() => decodeStatusResponse(Uint8Array.from([1, ...encodeStatus(status)]))).to.throw(StatusDecodingError, /result 1/);
  });

  it("names the mismatch: protocol version, network, chain, genesis; the best block may differ", () => {
    const own = regtestLikeStatus();
    const peer = (changes: object) => ({ ...own, protocolVersion: statusProtocolVersion, ...changes });
    expect(statusMismatch(own, peer({ bestNumber: 99n, totalDifficulty: 100n }))).to.equal(undefined);
    expect(statusMismatch(own, peer({ protocolVersion: 2 }))).to.equal("incompatibleProtocol");
    expect(statusMismatch(own, peer({ networkId: 775 }))).to.equal("invalidNetwork");
    expect(statusMismatch(own, peer({ chainId: 31n }))).to.equal("invalidChain");
    expect(statusMismatch(own, peer({ genesisHash: hash32(9) }))).to.equal("unexpectedGenesis");
  });
});
