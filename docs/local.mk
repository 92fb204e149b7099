# Manual pages and documents.  The pages name the documents where a
# package installs them, /usr/share/doc/pinhole; the pages installed
# name this build's $(docdir) instead.
man_MANS = docs/man/pinhole.1 docs/man/pinhole-policy.5 docs/man/pinhole-bash.1
EXTRA_DIST += docs/pinhole.1 docs/pinhole-policy.5 docs/pinhole-bash.1
# The scaling report, written by `make bench` (tests/bench/report.py).
EXTRA_DIST += docs/performance.md docs/performance
CLEANFILES += $(man_MANS)
MAN_EDIT = $(SED) -e 's|/usr/share/doc/pinhole|$(docdir)|g'
docs/man/pinhole.1: docs/pinhole.1 Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	$(MAN_EDIT) $(srcdir)/docs/pinhole.1 >$@.tmp && mv $@.tmp $@
docs/man/pinhole-policy.5: docs/pinhole-policy.5 Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	$(MAN_EDIT) $(srcdir)/docs/pinhole-policy.5 >$@.tmp && mv $@.tmp $@
docs/man/pinhole-bash.1: docs/pinhole-bash.1 Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	$(MAN_EDIT) $(srcdir)/docs/pinhole-bash.1 >$@.tmp && mv $@.tmp $@

# The documents the pages point to, the README and the licence.
dist_doc_DATA = README.md LICENSE \
	docs/agents.md \
	docs/architecture.md \
	docs/audit-log.md \
	docs/control-protocol.md \
	docs/decider.md \
	docs/deploy.md \
	docs/inspection.md \
	docs/metrics.md \
	docs/sandbox.md \
	docs/threat-model.md

# docs/deploy.md's files, each checked by the tool that reads it.
TESTS += tests/integration/deploy.sh
EXTRA_DIST += tests/integration/deploy.sh

# Every example of the documents is run, or says why it cannot be.
TESTS += tests/integration/docs-examples.sh
EXTRA_DIST += tests/integration/docs-examples.sh tests/doc-examples.py \
	tests/integration/docs-proto.py
