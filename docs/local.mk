# Manual pages and documents.
EXTRA_DIST += docs/audit-log.md
