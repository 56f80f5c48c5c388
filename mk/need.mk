# SPDX-License-Identifier: GPL-2.0
# $(call need,COMMAND,DEBIAN-PACKAGE): stop early, naming what to install.
need = $(if $(shell command -v $(1) 2>/dev/null),,$(error '$(1)' not found: \
	install the Debian package '$(2)' (make deps installs everything: as root, or with sudo))) 
# $(call need-header,HEADER,DEBIAN-PACKAGE): the same for a C header.
need-header = $(if $(shell printf '\#include <$(1)>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo y),,\
	$(error '$(1)' not found: install the Debian package '$(2)' (make deps installs everything: as root, or with sudo)))
