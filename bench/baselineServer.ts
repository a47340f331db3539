// Reference servers for bench-rpc: they answer every POST with a fixed eth_chainId response, so
// a run shows what this machine can do without the node's pipeline at that moment. The node-http
// one is also the start-up floor of bench-chain (a Node.js process that answers at all), so it
// loads nothing more than node:http: Koa is imported only for the koa server.
//   node dist/bench/baselineServer.js node-http|koa
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

const answer = '{"jsonrpc":"2.0","id":1,"result":"0x21"}';
const headers = { "content-type": "application/json", "content-length": Buffer.byteLength(answer) };

function drain(request: IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    request.on("data", () => {});
    request.on("end", resolve);
  });
}

function writeAnswer(response: ServerResponse): void {
  response.writeHead(200, headers).end(answer);
}

const kind = process.argv[2];
let server;
if (kind === "node-http") {
  server = createServer((request, response) => void drain(request).then(() => writeAnswer(response)));
} else if (kind === "koa") {
  const { default: Koa } = await import("koa");
  const app = new Koa();
  app.use(async (ctx) => {
    await drain(ctx.req);
    ctx.respond = false;
    writeAnswer(ctx.res);
  });
  server = createServer(app.callback());
} else {
  console.error("usage: baselineServer node-http|koa");
  process.exit(2);
}
server.listen(0, "127.0.0.1", () => {
  // The same line the node logs, so one helper can start either.
  console.log(JSON.stringify({ msg: "JSON-RPC server listening", url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
