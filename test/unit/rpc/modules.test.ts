import { expect } from "chai";
import { rpcNamespaces } from "../../../generated/methods.js";
import { isLoopbackHost, loopbackOnlyModules, ModuleSelectionError, resolveEnabledModules } from "../../../src/rpc/modules.js";

const sorted = (modules: Iterable<string>) => [...modules].sort();

describe("rpc/modules", () => {
  it("recognises loopback hosts", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]", "LOCALHOST"]) expect(isLoopbackHost(host), host).to.equal(true);
    for (const host of ["0.0.0.0", "::", "192.168.1.10", "10.0.0.1", "example.com", "128.0.0.1"]) expect(isLoopbackHost(host), host).to.equal(false);
  });

  it("enables every module on a loopback bind by default", () => {
    expect(sorted(resolveEnabledModules(undefined, "127.0.0.1"))).to.deep.equal(sorted(rpcNamespaces));
  });

  it("turns personal, evm, anvil, hardhat, debug, trace, txpool and sco off on a non-loopback bind unless named", () => {
    expect(sorted(loopbackOnlyModules)).to.deep.equal(["anvil", "debug", "evm", "hardhat", "personal", "sco", "trace", "txpool"]);
    const enabled = resolveEnabledModules(undefined, "0.0.0.0");
    for (const module of loopbackOnlyModules) expect(enabled.has(module), module).to.equal(false);
    expect(sorted(enabled)).to.deep.equal(["eth", "ext", "mnr", "net", "web3"]);
    expect(enabled.has("eth")).to.equal(true);
    expect(enabled.has("mnr"), "merged-mining pools connect over the network").to.equal(true);
    expect(sorted(resolveEnabledModules("eth,personal", "0.0.0.0"))).to.deep.equal(["eth", "personal"]);
    expect(resolveEnabledModules("+debug", "0.0.0.0").has("debug")).to.equal(true);
    expect(sorted(resolveEnabledModules("eth,anvil,hardhat", "0.0.0.0"))).to.deep.equal(["anvil", "eth", "hardhat"]);
  });

  it("takes a plain list as the exact set, and signed entries as changes of the default", () => {
    expect(sorted(resolveEnabledModules("eth, net ,web3", "127.0.0.1"))).to.deep.equal(["eth", "net", "web3"]);
    const withoutDebug = resolveEnabledModules("-debug,-trace", "127.0.0.1");
    expect(withoutDebug.has("debug")).to.equal(false);
    expect(withoutDebug.has("trace")).to.equal(false);
    expect(withoutDebug.has("eth")).to.equal(true);
    expect(sorted(resolveEnabledModules("all,-trace", "127.0.0.1"))).to.deep.equal(sorted(rpcNamespaces.filter((name) => name !== "trace")));
  });

  it("keeps 'all' within the exposure rule: loopback-only modules must be named one by one", () => {
    const everywhere = resolveEnabledModules("all", "0.0.0.0");
    for (const module of loopbackOnlyModules) expect(everywhere.has(module), module).to.equal(false);
    expect(resolveEnabledModules("all,personal", "0.0.0.0").has("personal")).to.equal(true);
    expect(sorted(resolveEnabledModules("all", "127.0.0.1"))).to.deep.equal(sorted(rpcNamespaces));
  });

  it("refuses an unknown module by name", () => {
    expect(() => resolveEnabledModules("eth,bogus", "127.0.0.1")).to.throw(ModuleSelectionError, /unknown RPC module "bogus"/);
    expect(() => resolveEnabledModules("db", "127.0.0.1")).to.throw(ModuleSelectionError);
  });
});
