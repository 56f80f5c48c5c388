# SPDX-License-Identifier: GPL-2.0
# mk/prog.mk - what a userspace C directory's Makefile ends with (after
# mk/c.mk): each of $(PROGS) is linked from the objects its own rule
# names, and clean removes them; common/'s objects build as mk/common.mk
# says.

include $(dir $(lastword $(MAKEFILE_LIST)))common.mk

$(PROGS):
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

clean:
	rm -f $(PROGS) $(CLEAN) *.o

.PHONY: all clean
