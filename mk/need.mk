# SPDX-License-Identifier: GPL-2.0
# $(call need,COMMAND,DEBIAN-PACKAGE): stop early, naming what to install.
need = $(if $(shell command -v $(1) 2>/dev/null),,$(error '$(1)' not found: \
	install the Debian package '$(2)' (sudo make deps installs everything))) 
