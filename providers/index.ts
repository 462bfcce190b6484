// Model providers. One export line per provider class.
