# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# mk/loader.mk - what a BPF loader's Makefile ends with (ebpf-echo/,
# sockredir/), after mk/bpf.mk, $(APPS) and $(LIB): each of $(APPS) is
# its object linked with $(LIB), the common/ objects it needs, built as
# mk/common.mk says; deps and clean.

include $(dir $(lastword $(MAKEFILE_LIST)))common.mk

$(APPS): %: $(OUTPUT)/%.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The suite's package list lives in one place.
deps:
	../scripts/deps.sh

clean:
	rm -rf $(OUTPUT) $(APPS)

.PHONY: all deps clean
