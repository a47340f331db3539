// Promise.withResolvers (ES2024) for Node 20: libp2p 3 and its helpers (it-queue, mortice, yamux,
// tcp, ping) call it, and Node 20 has no flag to turn it on (the first libp2p stop() threw
// "Promise.withResolvers is not a function"). Imported for its effect, before libp2p is used;
// on Node 22 the built-in stays.
interface Resolvers<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}

const promiseConstructor = Promise as unknown as { withResolvers?: <T>() => Resolvers<T> };
if (typeof promiseConstructor.withResolvers !== "function") {
  Object.defineProperty(Promise, "withResolvers", {
    configurable: true,
    writable: true,
    value: function withResolvers<T>(): Resolvers<T> {
      let resolve!: Resolvers<T>["resolve"];
      let reject!: Resolvers<T>["reject"];
      const promise = new Promise<T>((settle, refuse) => {
        resolve = settle;
        reject = refuse;
      });
      return { promise, resolve, reject };
    },
  });
}

export {};
