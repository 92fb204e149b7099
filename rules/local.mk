# Policy parser and matcher: pure C.
