# Manual pages and documents.
EXTRA_DIST += docs/audit-log.md
dist_man_MANS += docs/pinhole.1
