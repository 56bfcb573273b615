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
	@for url in 'im://chat?rootCateID=1&cateID=12&peer=u42&infoID=L1001' \
	            'im://chat?rootCateID=9&cateID=13&peer=hr_li' \
	            'im://chat?rootCateID=4&cateID=2&peer=u7'; do \
	  echo; echo "\$$ imhost route '$$url'"; $(BUILD)/imhost route "$$url" || exit 1; \
	done

# The tests load the built plugin products, so build everything before running them.
test:
	swift build --build-tests
	swift test --skip-build

clean:
	rm -rf .build Plugins/*.so
