import { expect } from "chai";
import { createHostCheck, hostnameOf } from "../../../src/rpc/hostCheck.js";

describe("rpc/hostCheck", () => {
  it("reads the name or address of a Host value without its port", () => {
    expect(hostnameOf("LocalHost:4444")).to.equal("localhost");
    expect(hostnameOf(" localhost.")).to.equal("localhost");
    expect(hostnameOf("[::1]:8545")).to.equal("::1");
    expect(hostnameOf("[::1]")).to.equal("::1");
    expect(hostnameOf("127.0.0.1:")).to.equal("127.0.0.1");
    expect(hostnameOf("chain.test")).to.equal("chain.test");
    expect(hostnameOf("")).to.equal("");
  });

  it("passes IP literals and listed names, and refuses the rest", () => {
    const allowed = createHostCheck(["localhost", "Chain.Test"]);
    for (const host of ["localhost", "localhost:1", "chain.test:80", "127.0.0.1:4444", "192.168.1.20", "[::1]:4444", "[fe80::1]", undefined]) {
      expect(allowed(host), String(host)).to.equal(true);
    }
    for (const host of ["evil.test", "localhost.evil.test", "127.0.0.1.evil.test", "", "[::1", "chain.test.x:80"]) {
      expect(allowed(host), host).to.equal(false);
    }
  });

  it("passes any name with *, and none but IP literals with an empty list", () => {
    expect(createHostCheck(["*"])("anything.test")).to.equal(true);
    const none = createHostCheck([]);
    expect(none("localhost")).to.equal(false);
    expect(none("127.0.0.1")).to.equal(true);
  });
});
