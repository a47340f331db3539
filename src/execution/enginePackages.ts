// The EVM's packages (@ethereumjs/vm and @ethereumjs/evm, whose precompiles build their elliptic
// curves as they load) and the engine's patches to them load with the first engine, not at start:
// a node answers its first request without them (issue 39). Code that runs the EVM reaches them
// through here; `import type` of their types costs nothing. Once loaded, `enginePackages` holds
// them, so a hot path reads them without waiting a turn.
import type * as Evm from "@ethereumjs/evm";
import type * as Vm from "@ethereumjs/vm";
import type * as FastPaths from "./interpreterFastPaths.js";
import type * as Frames from "./messageFrames.js";
import type * as TimeGuard from "./precompileTimeGuard.js";

export interface EnginePackages {
  readonly vm: typeof Vm;
  readonly evm: typeof Evm;
  readonly fastPaths: typeof FastPaths;
  readonly frames: typeof Frames;
  readonly timeGuard: typeof TimeGuard;
}

/** The packages once loaded (loadEnginePackages), else undefined. */
export let enginePackages: EnginePackages | undefined;
let loading: Promise<EnginePackages> | undefined;

export function loadEnginePackages(): Promise<EnginePackages> {
  loading ??= Promise.all([import("@ethereumjs/vm"), import("@ethereumjs/evm"), import("./interpreterFastPaths.js"), import("./messageFrames.js"), import("./precompileTimeGuard.js")]).then(
    ([vm, evm, fastPaths, frames, timeGuard]) => (enginePackages = { vm, evm, fastPaths, frames, timeGuard }),
  );
  return loading;
}
