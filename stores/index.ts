// Vector stores and indexes. One export line per store.
