# Presets and other files shipped alongside the program.
dist_preset_DATA = \
	contrib/presets/debian \
	contrib/presets/github \
	contrib/presets/go \
	contrib/presets/node \
	contrib/presets/python \
	contrib/presets/rust
EXTRA_DIST += contrib/demo.sh
# Examples beside the documents.
docexamplesdir = $(docdir)/examples
dist_docexamples_DATA = contrib/example.policy \
	contrib/approval-bridge/bridge.py

# systemd's units name the installed program (contrib/systemd/).  They
# are built whether or not they are installed (--with-systemd*unitdir=no),
# so that `make check` verifies them everywhere.
UNITS = contrib/systemd/pinhole-proxy.service \
	contrib/systemd/pinhole-session@.service
if SYSTEMD_SYSTEM_UNITS
systemdsystemunit_DATA = contrib/systemd/pinhole-proxy.service
endif
if SYSTEMD_USER_UNITS
systemduserunit_DATA = contrib/systemd/pinhole-session@.service
endif
noinst_DATA = $(UNITS)
EXTRA_DIST += contrib/systemd/pinhole-proxy.service.in \
	contrib/systemd/pinhole-session@.service.in
CLEANFILES += $(UNITS)
CONTRIB_EDIT = $(SED) -e 's|@bindir[@]|$(bindir)|g' \
	-e 's|@sysconfdir[@]|$(sysconfdir)|g'
contrib/systemd/pinhole-proxy.service: \
    contrib/systemd/pinhole-proxy.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	$(CONTRIB_EDIT) $(srcdir)/$@.in >$@.tmp && mv $@.tmp $@
contrib/systemd/pinhole-session@.service: \
    contrib/systemd/pinhole-session@.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	$(CONTRIB_EDIT) $(srcdir)/$@.in >$@.tmp && mv $@.tmp $@
# make install: every file, where the manual says; the units verified.
TESTS += tests/integration/install.sh
EXTRA_DIST += tests/integration/install.sh
