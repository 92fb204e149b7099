# Manual pages and documents.
