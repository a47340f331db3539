// Dependency direction of src/ (docs/design.md, and the team's architecture guide): each folder
// may import only the folders listed for it; no cycles; generated/ stands alone.
/** folder -> the src/ folders it may import (types or runtime) */
const allowed = {
  common: [],
  storage: ["common"],
  state: ["storage", "common"],
  execution: ["state", "common", "chain"],
  chain: ["execution", "state", "storage", "common"],
  consensus: ["chain", "execution", "state", "common"],
  accounts: ["common"],
  txpool: ["common", "chain", "state", "storage"],
  tracing: ["execution", "common", "chain", "state"],
  logs: ["chain", "txpool", "common"],
  mining: ["txpool", "execution", "chain", "common", "state", "consensus"],
  p2p: ["common"],
  sync: ["p2p", "common", "chain", "consensus", "txpool"],
  rpc: ["common", "chain", "state", "execution", "txpool", "mining", "tracing", "accounts", "p2p", "logs"],
  node: ["common", "storage", "state", "execution", "chain", "consensus", "accounts", "txpool", "tracing", "mining", "p2p", "sync", "rpc", "logs"],
  cli: ["node", "common"],
};

const folderRules = Object.entries(allowed).map(([folder, others]) => ({
  name: `${folder}-imports`,
  comment: `src/${folder} may import only: ${others.join(", ") || "nothing else in src"}`,
  severity: "error",
  from: { path: `^src/${folder}/` },
  to: { path: "^src/", pathNot: `^src/(${[folder, ...others].join("|")})/` },
}));

module.exports = {
  forbidden: [
    ...folderRules,
    { name: "no-circular", severity: "error", from: {}, to: { circular: true } },
    { name: "generated-stands-alone", severity: "error", from: { path: "^generated/" }, to: { path: "^(src|test|bench|codegen)/" } },
    { name: "src-not-tests", severity: "error", from: { path: "^src/" }, to: { path: "^(test|bench|codegen)/" } },
    {
      name: "libp2p-only-in-p2p",
      comment: "only src/p2p knows libp2p (loaded by the node only when the network is on)",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/p2p/" },
      // The packages are ES modules only: depcruise may not resolve them and keeps the bare name.
      to: { path: "(^|node_modules/)(libp2p|@libp2p/|@chainsafe/|@multiformats/)" },
    },
    { name: "koa-only-in-server", comment: "only rpc/server.ts knows HTTP", severity: "error", from: { path: "^src/", pathNot: "^src/rpc/server\\.ts$" }, to: { path: "node_modules/koa/" } },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js", ".d.ts"] },
  },
};
