# SPDX-License-Identifier: GPL-2.0
# mk/common.mk - the headers each of common/'s objects is built from, for
# every directory that links some of them. Naming an object here does not
# build it: a directory links only those it names.

# Where its objects go: mk/bpf.mk's $(OUTPUT), else the directory itself.
objdir := $(if $(OUTPUT),$(OUTPUT)/)

$(objdir)cgroup.o: cgroup.h
$(objdir)cli.o: cli.h
$(objdir)cpulist.o: cpulist.h
$(objdir)listen.o: cli.h listen.h
$(objdir)loader.o: loader.h cgroup.h
$(objdir)rawfile.o: rawfile.h
$(objdir)server.o: cli.h listen.h server.h
$(objdir)stats.o: stats.h
$(objdir)summary.o: summary.h stats.h
