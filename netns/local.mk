# Namespaces, links and the sandboxed child.
