import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { expect } from "chai";
import { idleBackgroundThreads } from "../../../src/cli/backgroundThreads.js";
import { chrtAvailable, schedIdlePolicy, threadIdsOf, threadPolicy } from "../../helpers/threads.js";

describe("cli/backgroundThreads", () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    child?.kill("SIGKILL");
    child = undefined;
  });

  it("puts the given threads under SCHED_IDLE (threads of another node process here, leaving the test's own alone)", async function () {
    if (!chrtAvailable) this.skip();
    child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 10_000)"], { stdio: "ignore" });
    const childId = child.pid!;
    // Its V8 and libuv threads start with it.
    const deadline = Date.now() + 5_000;
    let threadIds: number[] = [];
    while (Date.now() < deadline && threadIds.length < 2) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      threadIds = threadIdsOf(childId).filter((threadId) => threadId !== childId);
    }
    expect(threadIds.length, "threads of the child besides its main one").to.be.greaterThan(0);

    const outcome = await idleBackgroundThreads(threadIds);
    expect(outcome).to.deep.equal({ idle: threadIds.length });
    for (const threadId of threadIds) expect(threadPolicy(childId, threadId), `policy of thread ${threadId}`).to.equal(schedIdlePolicy);
    expect(threadPolicy(childId, childId), "the child's main thread").to.equal(0);
  });

  it("skips a thread that has ended (a thread id no process has)", async () => {
    const maxThreadId = Number(readFileSync("/proc/sys/kernel/pid_max", "utf8"));
    expect(await idleBackgroundThreads([maxThreadId + 1])).to.deep.equal({ idle: 0 });
  });
});
