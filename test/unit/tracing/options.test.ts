// Trace options as the handlers read them: tracerConfig wins over the top level, and trace_filter
// bounds against the trace limit.
import { expect } from "chai";
import { debugTracerOptions } from "../../../src/rpc/methods/debug.js";
import { flatTraceFilter } from "../../../src/rpc/methods/trace.js";
import type { Chain } from "../../../src/chain/chain.js";
import { RpcError } from "../../../src/rpc/errors.js";

const chainAt = (head: bigint) => ({ head: { number: head } }) as unknown as Chain;

describe("tracing options", () => {
  it("defaults to the struct-log tracer as geth's: stack and storage on, memory and return data off, no step limit", () => {
    const defaults = { tracer: "structLogTracer", disableStack: false, enableMemory: false, disableStorage: false, enableReturnData: false, limit: 0 };
    expect(debugTracerOptions(undefined)).to.deep.equal(defaults);
    expect(debugTracerOptions({})).to.deep.equal(defaults);
  });

  it("turns memory on with enableMemory or disableMemory: false, and off with disableMemory: true whatever enableMemory says", () => {
    const memory = (options: Parameters<typeof debugTracerOptions>[0]) => (debugTracerOptions(options) as { enableMemory: boolean }).enableMemory;
    expect(memory({ enableMemory: true })).to.equal(true);
    expect(memory({ tracerConfig: { enableMemory: "true" } })).to.equal(true);
    expect(memory({ disableMemory: false })).to.equal(true);
    expect(memory({ disableMemory: "false" })).to.equal(true);
    expect(memory({ enableMemory: true, disableMemory: true })).to.equal(false);
    expect(memory({ enableMemory: true, tracerConfig: { disableMemory: true } })).to.equal(false);
    expect(memory({ enableMemory: false })).to.equal(false);
    expect(debugTracerOptions({ limit: 5, enableReturnData: true })).to.deep.include({ limit: 5, enableReturnData: true });
    expect(debugTracerOptions({ limit: 5, tracerConfig: { limit: 7 } })).to.deep.include({ limit: 7 });
  });

  it("takes a switch from tracerConfig over the same one at the top level", () => {
    expect(debugTracerOptions({ disableStack: true, disableMemory: true, tracerConfig: { disableStack: false } })).to.deep.equal({
      tracer: "structLogTracer",
      disableStack: false,
      enableMemory: false,
      disableStorage: false,
      enableReturnData: false,
      limit: 0,
    });
    expect(debugTracerOptions({ tracer: "callTracer", onlyTopCall: true, tracerConfig: { withLog: true }, enableMemory: true })).to.deep.equal({ tracer: "callTracer", onlyTopCall: true, withLog: true });
  });

  it("takes tracer names without regard to case, rskTracer as the struct-log tracer, and \"true\"/\"false\" as switches (as the reference)", () => {
    expect(debugTracerOptions({ tracer: "CALLTRACER", tracerConfig: { onlyTopCall: "true", withLog: "false" } })).to.deep.equal({ tracer: "callTracer", onlyTopCall: true, withLog: false });
    for (const tracer of ["rskTracer", "RSKTRACER", "structlogtracer"]) {
      expect(debugTracerOptions({ tracer, disableStack: "true", disableMemory: "false", disableStorage: true })).to.deep.equal({
        tracer: "structLogTracer",
        disableStack: true,
        enableMemory: true,
        disableStorage: true,
        enableReturnData: false,
        limit: 0,
      });
    }
    expect(() => debugTracerOptions({ tracer: "prestateTracer" })).to.throw(RpcError, 'invalid argument 1: field tracer: unknown tracer "prestateTracer": use structLogTracer (or rskTracer) or callTracer');
  });

  it("reads trace_filter bounds: defaults, tags, lower-case addresses, and the limits", () => {
    const filter = flatTraceFilter(chainAt(9n), { fromAddress: ["0xCD2A3D9F938E13CD947EC05ABC7FE734DF8DD826"] }, 100);
    expect(filter).to.deep.include({ fromBlock: 0n, toBlock: 9n, after: 0, count: 100 });
    expect([...filter.fromAddresses]).to.deep.equal(["cd2a3d9f938e13cd947ec05abc7fe734df8dd826"]);
    expect(filter.toAddresses.size).to.equal(0);
    expect(flatTraceFilter(chainAt(9n), { fromBlock: "0x3", toBlock: "pending", after: 100, count: 0 }, 100)).to.deep.include({ fromBlock: 3n, toBlock: 9n, after: 100, count: 0 });
    for (const [bad, message] of [
      [{ count: 101 }, "Count value too big. Maximum 100 traces allowed."],
      [{ after: 101 }, "After value too big. Maximum 100 traces allowed."],
      [{ fromBlock: "latest", toBlock: "0x2" }, "fromBlock cannot be greater than toBlock"],
    ] as const) {
      expect(() => flatTraceFilter(chainAt(9n), bad, 100)).to.throw(RpcError, message);
    }
  });
});
