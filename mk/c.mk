# SPDX-License-Identifier: GPL-2.0
# mk/c.mk - what a userspace C directory's Makefile starts with (bench/,
# analysis/, user-echo/, uring-echo/): the compiler and its warnings, and
# common/ in reach, its headers by -I and its sources by VPATH, so that a
# directory names common/'s objects (cli.o) as if they were its own. End
# the Makefile with mk/prog.mk.

CC      ?= cc
CFLAGS  ?= -O2 -g
CFLAGS  += -Wall -Wextra -Wshadow -std=gnu11 -I../common
VPATH   := ../common
include $(dir $(lastword $(MAKEFILE_LIST)))need.mk
$(call need,$(CC),gcc)
