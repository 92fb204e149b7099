# Manual pages and documents.
dist_man_MANS += docs/pinhole-policy.5
EXTRA_DIST += docs/audit-log.md
dist_man_MANS += docs/pinhole.1
EXTRA_DIST += docs/threat-model.md
EXTRA_DIST += docs/architecture.md
EXTRA_DIST += docs/inspection.md
