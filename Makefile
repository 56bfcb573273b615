# The two commands of README.md: `make demo` builds the host and the example lines, installs the
# lines into Plugins/ and runs the demo; `make test` runs the tests.
SHELL := /bin/bash
export PATH := $(PATH):/opt/swift/usr/bin
BUILD := .build/debug
LINES := house:House jobs:Jobs

.PHONY: demo test build plugins clean

build:
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

# The tests load the built plugin products, so build everything before running them.
test:
	swift build --build-tests
	swift test --skip-build

clean:
	rm -rf .build Plugins/*.so
