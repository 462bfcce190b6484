// Pre- and post-processors. One export line per processor.
