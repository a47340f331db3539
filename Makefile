# The front door: every target installs what it needs first.
SHELL := /bin/bash
.DEFAULT_GOAL := help

NPM_STAMP := node_modules/.installed-from-lock
TSC := node_modules/.bin/tsc
# The command as users run it: every pure-JavaScript dependency inside one file (names are kept; a
# source map sits beside it for --enable-source-maps): loading one file instead of several hundred
# modules halves the start-up time. Packages with native binaries stay outside and load from
# node_modules. Three levels deep, as dist/src/<module>/, so relative paths to package.json hold.
# The CLI is bundled as CommonJS (chain-node.main.cjs), with ESBUILD_COMMON's options through
# esbuild's API (cli/bundleCli.ts, which rewrites a dependency's start-up code as it bundles it),
# which the command (cli/launch.ts) compiles
# from V8's code cache, written here by one start as users make one, to its first answer and a stop
# (cli/codeCacheWarmUp.ts; V8 refuses a cache made under other V8 flags, and the first line gives
# some); import.meta.url becomes the launcher's parameter. What the CLI imports only when first needed (Koa for browsers' requests, ws for
# WebSocket upgrades) is compiled but not run at start.
# The call worker's thread (node/callWorker.ts) is bundled the same way (callWorker.main.cjs) and
# loaded by its own launcher (cli/callWorkerLaunch.ts, written as callWorker.js, the file the CLI
# starts) through its own cache, which the same start writes as the node stops, once the worker
# has warmed its call path up.
BUNDLE := dist/bundle/cli/chain-node.cjs
BUNDLE_MAIN := $(dir $(BUNDLE))chain-node.main.cjs
CALL_WORKER_MAIN := $(dir $(BUNDLE))callWorker.main.cjs
# classic-level's JavaScript (and abstract-level's, some 30 modules) is bundled: loaded one file at
# a time through node's module loader it took some 15 ms of each start. Only its binding.js, which
# finds the prebuilt binary beside itself, stays in the package: esbuild writes its require as a
# path relative to the bundle (../../../node_modules/classic-level/binding.js), which holds in the
# build tree as the bundle's other relative paths do.
NATIVE_PACKAGES := secp256k1 node-gyp-build ./node_modules/classic-level/binding.js
# Packages only an option loads (prom-client with --metrics-port) stay out of the bundle too: a
# node without the option neither reads nor compiles them.
ON_REQUEST_PACKAGES := prom-client
ESBUILD_COMMON := node_modules/.bin/esbuild --bundle --platform=node --target=node20 --log-level=warning \
  --minify-whitespace --minify-syntax --sourcemap $(addprefix --external:,$(NATIVE_PACKAGES) $(ON_REQUEST_PACKAGES))
# The launchers and the CLI's other worker threads (node/recoveryWorker.ts,
# node/batchChecksWorker.ts), which the CLI finds beside itself: CommonJS
# (dist/bundle/cli/package.json says so for the workers' .js files), with import.meta.url the
# file's own URL. An ES module as a process's or a thread's first file starts node's ES module
# loader as well, which a CommonJS one does not: an empty file started in 7-11 ms less as
# CommonJS on this machine (30 alternating starts each).
ESBUILD := $(ESBUILD_COMMON) --format=cjs --define:import.meta.url=__importMetaUrl \
  --banner:js="const __importMetaUrl = require('node:url').pathToFileURL(__filename).href;"
# The peer-to-peer network (p2p/network.ts and libp2p) is a bundle of its own, beside the CLI's
# folder: the node imports it (node/node.ts) only with --p2p, so a lone node neither reads nor
# compiles it. In the CLI's bundle that import stays a require() of the same relative path, which
# the launcher (cli/launch.ts) answers by compiling the bundle through a code cache of its own
# (CommonJS as the CLI, import.meta.url the launcher's parameter as in the CLI's), written by a
# second start of the warm-up: two nodes, one syncing from the other.
P2P_ENTRY := */p2p/network.js
P2P_BUNDLE := dist/bundle/p2p/network.js
RUN_ARGS ?=

.PHONY: help install gen gen-check check-deps build test test-unit test-rpc test-e2e run bench bench-rpc bench-chain bench-long bench-compare bench-traces bench-anvil bench-network lint clean

help:
	@echo "make run    install, build and start the node (regtest, 127.0.0.1:4444); RUN_ARGS='--help' for flags"
	@echo "make test   install, build, check generated/ and run every test"
	@echo "make gen    regenerate generated/ and the README method table from openrpc.json"
	@echo "make bench  run the benchmarks (bench-rpc: the JSON-RPC pipeline; bench-chain: transactions, reads, calls, logs, traces, start-up); JSON in dist/bench/results/"
	@echo "make bench-long  the node's memory over a 10-minute repeated run (BENCH_LONG_MINUTES)"
	@echo "make bench-network-simulation  30 nodes in one process over the memory transport: block propagation by hop count, bytes and duplicates per block (not in make bench: some 3 minutes)"
	@echo "make bench-compare  this build against BENCH_OTHER (another build's bundle), side by side"
	@echo "make bench-traces  struct-log trace answers: side by side with BENCH_OTHER, and a 1 GB answer's RSS"
	@echo "make bench-anvil  side by side with Anvil 1.7.1 (a dev dependency): start-up, eth_call, the first eth_getLogs, traces"
	@echo "make bench-network  peers over TCP on loopback: sync of 10,000 blocks against chain-node import, block and transaction propagation in a line of 3 nodes; BENCH_OTHER: a lone node's start-up against another build (not in make bench: 3-4.5 minutes)"

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: $(NPM_STAMP)

gen: install
	$(TSC) -p codegen
	node dist/codegen/main.js
	@mkdir -p dist/generated && cp generated/*.js dist/generated/

# Fails when generated/ or the README table do not match openrpc.json.
gen-check: build
	node dist/codegen/main.js --check

# AJV's standalone validators are plain JavaScript beside their .d.ts: copied, not compiled.
build: install
	$(TSC) -p .
	@mkdir -p dist/generated && cp generated/*.js dist/generated/
	@rm -rf $(dir $(BUNDLE)) $(dir $(P2P_BUNDLE))
	node dist/src/cli/bundleCli.js dist/src/cli/main.js $(BUNDLE_MAIN) $(NATIVE_PACKAGES) $(ON_REQUEST_PACKAGES) '$(P2P_ENTRY)'
	node dist/src/cli/bundleCli.js dist/src/node/callWorker.js $(CALL_WORKER_MAIN) $(NATIVE_PACKAGES) $(ON_REQUEST_PACKAGES)
	$(ESBUILD_COMMON) --format=cjs --define:import.meta.url=__importMetaUrl dist/src/p2p/network.js --outfile=$(P2P_BUNDLE)
	@echo '{ "type": "commonjs" }' > $(dir $(P2P_BUNDLE))package.json
	@echo '{ "type": "commonjs" }' > $(dir $(BUNDLE))package.json
	$(ESBUILD) dist/src/cli/launch.js --outfile=$(BUNDLE)
	$(ESBUILD) dist/src/cli/callWorkerLaunch.js --outfile=$(dir $(BUNDLE))callWorker.js
	$(ESBUILD) dist/src/node/recoveryWorker.js --outfile=$(dir $(BUNDLE))recoveryWorker.js
	$(ESBUILD) dist/src/node/batchChecksWorker.js --outfile=$(dir $(BUNDLE))batchChecksWorker.js
	@chmod +x $(BUNDLE)
	@for bundle in $(BUNDLE_MAIN) $(CALL_WORKER_MAIN) $(P2P_BUNDLE); do if LC_ALL=C grep -q -P '[^\x00-\x7F]' $$bundle; then echo "$$bundle is not ASCII: cli/cachedBundle.ts reads it as latin1"; exit 1; fi; done
	@./$(BUNDLE) --version >/dev/null
	@node dist/src/cli/codeCacheWarmUp.js ./$(BUNDLE) $(BUNDLE_MAIN).cache $(CALL_WORKER_MAIN).cache --p2p $(P2P_BUNDLE).cache

# Fails on an import that breaks the dependency direction of src/ (.dependency-cruiser.cjs).
check-deps: install
	node_modules/.bin/depcruise --config .dependency-cruiser.cjs src generated

test: build gen-check check-deps
	node dist/test/run.js

test-unit: build
	node dist/test/run.js unit spec

test-rpc: build
	node dist/test/run.js rpc

test-e2e: build
	node dist/test/run.js e2e

lint: build gen-check check-deps

# Through its first line, which gives node the runtime flags the command wants (src/cli/main.ts).
run: build
	./$(BUNDLE) $(RUN_ARGS)

bench: bench-rpc bench-chain

bench-rpc: build
	node dist/bench/rpc.js

bench-chain: build
	node dist/bench/chain.js

# The node's memory over a repeated run (BENCH_LONG_MINUTES, default 10): flat within 10 %?
bench-long: build
	node dist/bench/longRun.js

# 30 nodes in one process over libp2p's memory transport, one miner (bench/networkSimulation.ts;
# BENCH_NODES, BENCH_DEGREE, BENCH_BLOCKS, BENCH_BLOCK_INTERVAL_MS, BENCH_MAX_LAG, BENCH_SEED):
# issue 38's scaling figure, docs/network-scaling.md.
.PHONY: bench-network-simulation
bench-network-simulation: build
	node dist/bench/networkSimulation.js

# This build against another, side by side in alternating blocks (bench/compare.ts): BENCH_OTHER
# names the other build's dist/bundle/cli/chain-node.cjs (.mjs before 2026-11-29); BENCH_KIND=erc20 or transfers.
bench-compare: build
	node dist/bench/compare.js

# Trace answers (bench/traceAnswers.ts): BENCH_OTHER side by side, BENCH_TRACE_MB for the RSS check.
bench-traces: build
	node dist/bench/traceAnswers.js

# Side by side with Anvil (bench/anvil.ts; the @foundry-rs/anvil dev dependency, never run by make test).
bench-anvil: build
	node dist/bench/anvil.js

# Peers over TCP on 127.0.0.2-4 (bench/network.ts): sync against chain-node import, propagation in a
# line of three nodes; BENCH_SYNC_BLOCKS, BENCH_OTHER for the lone node's start-up against another build.
bench-network: build
	node dist/bench/network.js

clean:
	rm -rf dist
