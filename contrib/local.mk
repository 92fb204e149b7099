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
	contrib/approval-bridge/bridge.py \
	contrib/decider/decider-list.py contrib/decider/decider-chat.py

# systemd's units and the AppArmor profile name the installed program
# (contrib/systemd/, contrib/apparmor/).  They are built whether or not
# they are installed (--with-systemd*unitdir=no, --with-apparmordir=no),
# so that `make check` verifies them everywhere.
UNITS = contrib/systemd/pinhole-proxy.service \
	contrib/systemd/pinhole-session@.service
if SYSTEMD_SYSTEM_UNITS
systemdsystemunit_DATA = contrib/systemd/pinhole-proxy.service
endif
if SYSTEMD_USER_UNITS
systemduserunit_DATA = contrib/systemd/pinhole-session@.service
endif
if APPARMOR
apparmor_DATA = contrib/apparmor/pinhole
endif
noinst_DATA = $(UNITS) contrib/apparmor/pinhole
EXTRA_DIST += contrib/systemd/pinhole-proxy.service.in \
	contrib/systemd/pinhole-session@.service.in \
	contrib/systemd/proxy.policy \
	contrib/apparmor/pinhole.in
CLEANFILES += $(UNITS) contrib/apparmor/pinhole
CONTRIB_EDIT = $(SED) -e 's|@bindir[@]|$(bindir)|g' \
	-e 's|@sysconfdir[@]|$(sysconfdir)|g'
# AppArmor 3 has no userns rule, nor the ABI that brings it.
if APPARMOR_USERNS
APPARMOR_EDIT =
else
APPARMOR_EDIT = -e 's|^abi <abi/4\.0>,$$|abi <abi/3.0>,|' -e '/^  userns,$$/d'
endif
contrib/systemd/pinhole-proxy.service: \
    contrib/systemd/pinhole-proxy.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	$(CONTRIB_EDIT) $(srcdir)/$@.in >$@.tmp && mv $@.tmp $@
contrib/systemd/pinhole-session@.service: \
    contrib/systemd/pinhole-session@.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	$(CONTRIB_EDIT) $(srcdir)/$@.in >$@.tmp && mv $@.tmp $@
contrib/apparmor/pinhole: contrib/apparmor/pinhole.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	$(CONTRIB_EDIT) $(APPARMOR_EDIT) $(srcdir)/$@.in >$@.tmp && \
	mv $@.tmp $@
# make install: every file, where the manual says; the units verified.
TESTS += tests/integration/install.sh
EXTRA_DIST += tests/integration/install.sh
# The AppArmor profile: parsed everywhere, loaded where AppArmor runs.
TESTS += tests/integration/apparmor.sh
EXTRA_DIST += tests/integration/apparmor.sh
